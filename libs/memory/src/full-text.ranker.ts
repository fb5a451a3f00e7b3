import { MemoryRanker } from './memory.types';

/** Any word of the goal: plainto_tsquery's quoted lexemes joined by OR instead of AND. */
const anyWord = (p: string) => `replace(plainto_tsquery('simple', ${p})::text, ' & ', ' | ')::tsquery`;

/**
 * The default ranker: PostgreSQL full-text search in the 'simple' configuration (no stemming, no
 * stop words, any language) over the generated `search` column. An entry matches when it has any
 * word of the goal; ts_rank orders the matches (more of the goal's words rank higher).
 */
export const fullTextRanker: MemoryRanker = {
  name: 'full-text',
  prepare: (goal: string) => goal,
  score: (p: string) => `CASE WHEN m.search @@ ${anyWord(p)} THEN ts_rank(m.search, ${anyWord(p)}) ELSE 0 END`,
};
