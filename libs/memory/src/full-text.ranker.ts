import { MemoryRanker } from './memory.types';

/**
 * The default ranker: PostgreSQL full-text search in the 'simple' configuration (no stemming, any
 * language) over the generated `search` column, scored by ts_rank of the goal as a web-search query.
 */
export const fullTextRanker: MemoryRanker = {
  name: 'full-text',
  prepare: (goal: string) => goal,
  score: (p: string) =>
    `CASE WHEN m.search @@ websearch_to_tsquery('simple', ${p}) THEN ts_rank(m.search, websearch_to_tsquery('simple', ${p})) ELSE 0 END`,
};
