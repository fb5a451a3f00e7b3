import { Logger } from '@nestjs/common';

/** Every line any Nest Logger method was given while `work` ran (the lines are held, not printed; `work` sees them come). */
export async function logsOf(work: (lines: readonly string[]) => Promise<void>): Promise<string[]> {
  const lines: string[] = [];
  const spies = (['log', 'warn', 'error', 'debug', 'verbose'] as const).map((m) =>
    jest.spyOn(Logger.prototype, m).mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(' '))),
  );
  try {
    await work(lines);
  } finally {
    for (const s of spies) s.mockRestore();
  }
  return lines;
}
