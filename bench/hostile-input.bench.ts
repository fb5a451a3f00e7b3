import { Redactor } from '@zmodu/guard';
import { compileSchema } from '@zmodu/skills/internal';
import { msPerRun } from './measure';
import { Row } from './report';

/**
 * Hostile input against ordinary input of the same length, on the paths that read what a model or an MCP server sends:
 * the redactor's text rules and a skill schema's pattern. The specs check the outcome on the hostile input and, where
 * the steps can be counted (the schema's RE2 reads, uniqueItems' item reads), that they grow linearly; how long it
 * takes is measured here, side by side with the ordinary input, never asserted in a test.
 */

/** The redactor spec's hostile text: long runs that a backtracking or rescanning rule would chew on. */
export const HOSTILE_TEXT = `${'a'.repeat(200_000)} ${'1 '.repeat(100_000)} ${'a@'.repeat(50_000)} ${'sk-'.repeat(50_000)} api_key${' '.repeat(100_000)}`;

/** Ordinary prose of `length` characters (words, a number, punctuation). */
function prose(length: number): string {
  const line = 'The quick brown fox jumps over the lazy dog; order 42 for acme shipped on time. ';
  return line.repeat(Math.ceil(length / line.length)).slice(0, length);
}

/** The json-schema spec's catastrophic pattern's longest hostile string: 'a' x 50,000 then 'b'. */
const PATTERN_LENGTH = 50_000;

export async function runHostileInputBench(log: (line: string) => void): Promise<{ rows: Row[] }> {
  const redactor = new Redactor({ emails: true });
  const plain = prose(HOSTILE_TEXT.length);
  const redact = await msPerRun(
    { hostile: async () => redactor.redactText(HOSTILE_TEXT).length, plain: async () => redactor.redactText(plain).length },
    { warmupRounds: 2, rounds: 9, runsPerRound: 3 },
  );
  log(
    `hostile input: redactText of ${HOSTILE_TEXT.length.toLocaleString('en-US')} characters: hostile ${redact.hostile.toFixed(1)} ms, prose ${redact.plain.toFixed(1)} ms`,
  );

  // Linear: the time per character of the catastrophic pattern at 50,000 characters against at 5,000 (a backtracking
  // engine doubles its time with each character).
  const catastrophic = compileSchema({ type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } }, required: ['s'] });
  const long = { s: `${'a'.repeat(PATTERN_LENGTH)}b` };
  const short = { s: `${'a'.repeat(PATTERN_LENGTH / 10)}b` };
  const pattern = await msPerRun(
    { long: async () => Number(catastrophic(long)), short: async () => Number(catastrophic(short)) },
    { warmupRounds: 2, rounds: 9, runsPerRound: 5 },
  );
  const perChar = { long: (pattern.long * 1e6) / PATTERN_LENGTH, short: (pattern.short * 1e7) / PATTERN_LENGTH };
  log(
    `hostile input: schema pattern ^(a+)+$: ${PATTERN_LENGTH.toLocaleString('en-US')} characters ${pattern.long.toFixed(2)} ms, a tenth of them ${pattern.short.toFixed(2)} ms`,
  );

  return {
    rows: [
      {
        name: `redactText, ${Math.round(HOSTILE_TEXT.length / 1000)} K characters of hostile runs vs the same length of prose`,
        value: redact.hostile,
        unit: 'ms',
        baseline: redact.plain,
        target: { text: 'ratio <= 3', met: redact.hostile / redact.plain <= 3 },
      },
      {
        name: `schema pattern ^(a+)+$ (RE2), 'a' x n + 'b': time per character at n = ${PATTERN_LENGTH.toLocaleString('en-US')} vs n = ${(PATTERN_LENGTH / 10).toLocaleString('en-US')}`,
        value: perChar.long,
        unit: 'ns/char',
        baseline: perChar.short,
        target: { text: 'ratio <= 2 (linear)', met: perChar.long / perChar.short <= 2 },
      },
    ],
  };
}
