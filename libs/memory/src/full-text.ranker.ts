import { MemoryRanker } from './memory.types';

/** Any word of the goal: plainto_tsquery's quoted lexemes joined by OR instead of AND. */
const anyWord = (p: string) => `replace(plainto_tsquery('simple', ${p})::text, ' & ', ' | ')::tsquery`;

/** The most words of a goal a recall searches for, and the characters of the goal they are taken from. */
export const MAX_QUERY_WORDS = 32;
export const MAX_QUERY_SOURCE_CHARS = 2_000;

/**
 * The goal as the search sees it: its first MAX_QUERY_WORDS distinct words (letters, digits, underscore) from
 * its first MAX_QUERY_SOURCE_CHARS characters, lower-cased. A long goal of thousands of words would otherwise
 * become one tsquery of thousands of ORed terms (enough to exhaust the embedded database's stack), and NUL or
 * control characters never reach the SQL.
 */
export function queryWords(goal: unknown): string {
  if (typeof goal !== 'string') return '';
  const words = new Set<string>();
  for (const m of goal.slice(0, MAX_QUERY_SOURCE_CHARS).matchAll(/[\p{L}\p{N}_]+/gu)) {
    words.add(m[0].toLowerCase());
    if (words.size >= MAX_QUERY_WORDS) break;
  }
  return [...words].join(' ');
}

/**
 * The default ranker: PostgreSQL full-text search in the 'simple' configuration (no stemming, no
 * stop words, any language) over the generated `search` column. An entry matches when it has any
 * word of the goal; ts_rank orders the matches (more of the goal's words rank higher).
 */
export const fullTextRanker: MemoryRanker = {
  name: 'full-text',
  prepare: (goal: string) => queryWords(goal),
  score: (p: string) => `CASE WHEN m.search @@ ${anyWord(p)} THEN ts_rank(m.search, ${anyWord(p)}) ELSE 0 END`,
};
