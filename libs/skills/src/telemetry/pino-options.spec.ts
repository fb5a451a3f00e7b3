import pino from 'pino';
import { Redactor } from '@zmodu/guard';
import { withLogContext, zmoduLogContext } from './log-context';
import { zmoduPinoOptions } from './pino-options';

const API_KEY = 'sk-proj-Zy9XwVuTsRqPoNmLkJiHgFe';
const CARD = '4111 1111 1111 1111';

/** A pino logger with zmoduPinoOptions, writing its lines into an array. */
function capture(redactor?: Redactor) {
  const lines: string[] = [];
  const logger = pino({ level: 'trace', ...zmoduPinoOptions(redactor) }, { write: (line: string) => void lines.push(line) });
  return { logger, lines, parsed: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe('zmoduLogContext', () => {
  it('is the run, tenant and agent inside withLogContext, across awaits, and {} outside', async () => {
    expect(zmoduLogContext()).toEqual({});
    const inside = await withLogContext({ runId: 'r1', tenantId: 't1', agent: 'trader' }, async () => {
      await new Promise((r) => setTimeout(r, 1));
      return zmoduLogContext();
    });
    expect(inside).toEqual({ runId: 'r1', tenantId: 't1', agent: 'trader' });
    expect(zmoduLogContext()).toEqual({});
  });

  it('leaves out what is not a non-empty string, and a nested context replaces the outer one', () => {
    withLogContext({ runId: 'r1', tenantId: '', agent: 42 }, () => {
      expect(zmoduLogContext()).toEqual({ runId: 'r1' });
      withLogContext({ runId: 'r2', tenantId: 't2' }, () => expect(zmoduLogContext()).toEqual({ runId: 'r2', tenantId: 't2' }));
    });
    expect(withLogContext(null, () => zmoduLogContext())).toEqual({});
  });

  it('hands out a fresh object each time (pino merges into it)', () => {
    withLogContext({ runId: 'r1' }, () => {
      const first = zmoduLogContext() as Record<string, unknown>;
      first.extra = true;
      expect(zmoduLogContext()).toEqual({ runId: 'r1' });
    });
  });
});

describe('zmoduPinoOptions', () => {
  it('puts the run on each line written during one, and nothing on the others', () => {
    const { logger, parsed } = capture();
    logger.info('before');
    withLogContext({ runId: 'r1', tenantId: 't1', agent: 'trader' }, () => logger.child({ context: 'X' }).warn('during'));
    const [before, during] = parsed();
    expect(before).not.toHaveProperty('runId');
    expect(during).toMatchObject({ msg: 'during', context: 'X', runId: 'r1', tenantId: 't1', agent: 'trader' });
  });

  it('masks secrets, tokens and card numbers in messages, objects, bindings and error stacks', () => {
    const { logger, lines, parsed } = capture();
    logger.info(`calling with ${API_KEY} and Bearer abcdefghijklmnop, card ${CARD}`);
    logger.info({ token: 'short-one', password: 'hunter22', nested: { auth: `Bearer ${API_KEY}` } }, 'objects');
    logger.child({ apiKey: 'bound-secret' }).info('bound');
    logger.error(new Error(`upstream refused ${API_KEY}`));
    const text = lines.join('');
    for (const secret of [API_KEY, 'abcdefghijklmnop', CARD, 'short-one', 'hunter22', 'bound-secret']) expect(text).not.toContain(secret);
    const [message, objects, bound, error] = parsed();
    expect(message.msg).toBe('calling with [redacted] and Bearer [redacted], card [redacted]');
    expect(objects).toMatchObject({ token: '[redacted]', password: '[redacted]', nested: { auth: 'Bearer [redacted]' } });
    expect(bound.apiKey).toBe('[redacted]');
    expect(error).toMatchObject({
      level: 50,
      msg: 'upstream refused [redacted]',
      err: { type: 'Error', message: 'upstream refused [redacted]' },
    });
    expect((error.err as { stack: string }).stack).toMatch(/^Error: upstream refused \[redacted\]\n\s+at /);
    // Each line stays one JSON line.
    expect(lines.every((l) => l.endsWith('\n') && !l.slice(0, -1).includes('\n'))).toBe(true);
  });

  it('censors the credential headers of pino-http lines with the redactor replacement, and keeps the others', () => {
    const { logger, parsed } = capture(new Redactor({ replacement: '***' }));
    logger.info({
      req: { method: 'GET', headers: { authorization: 'opaque', cookie: 'sid=1', 'x-api-key': 'k', accept: 'application/json' } },
      res: { statusCode: 200, headers: { 'set-cookie': 'sid=2' } },
    });
    const [line] = parsed();
    expect(line.req).toEqual({
      method: 'GET',
      headers: { authorization: '***', cookie: '***', 'x-api-key': '***', accept: 'application/json' },
    });
    expect(line.res).toEqual({ statusCode: 200, headers: { 'set-cookie': '***' } });
  });

  it('redacts a line that is not JSON as text (a custom formatter)', () => {
    const { streamWrite } = zmoduPinoOptions().hooks;
    expect(streamWrite(`plain ${API_KEY}\n`)).toBe('plain [redacted]\n');
  });

  it('uses the rules of the redactor it is given (own patterns; e-mail addresses when on)', () => {
    const { logger, parsed } = capture(new Redactor({ emails: true, patterns: [/ACCT-\d{6}/] }));
    logger.info('ada@example.com owns ACCT-123456');
    expect(parsed()[0].msg).toBe('[redacted] owns [redacted]');
  });

  it('refuses what is not a Redactor, saying what to pass', () => {
    expect(() => zmoduPinoOptions({ replacement: 'x' } as unknown as Redactor)).toThrow(
      /takes a Redactor \(GuardModule's: inject: \[Redactor\]/,
    );
  });
});
