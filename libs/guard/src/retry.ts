/**
 * @internal Run `work` up to `attempts` times, waiting `firstDelayMs` after the first failure and
 * twice as long after each next one (at most `maxDelayMs`); the last failure is thrown.
 * BufferedFlusher (the audit log's and the token quota's queues) flushes with it at shutdown.
 */
export async function withRetries<T>(
  work: () => Promise<T>,
  options: { attempts: number; firstDelayMs: number; maxDelayMs: number },
): Promise<T> {
  let delay = options.firstDelayMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      if (attempt >= options.attempts) throw err;
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, options.maxDelayMs);
    }
  }
}
