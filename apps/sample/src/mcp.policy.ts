import type { GuardPolicy } from '@zmodu/guard';

/** Where the sample serves MCP (Streamable HTTP), behind its JWT authentication. */
export const SAMPLE_MCP_PATH = '/mcp';

/**
 * What an MCP client of the sample may list and call: the analyst's read skills (quotes, the desk's
 * data under db.query's fences) and drafting an order for a human (propose). Nothing executes:
 * orders are submitted only through the proposal pipeline. Each caller sees only the skills its
 * token's permissions open (market:read, order:draft).
 */
export const SAMPLE_MCP_POLICY: GuardPolicy = {
  allow: ['market.quote', 'db.query', 'entity.list', 'entity.lookup', 'order.draft'],
  allowExecute: false,
};
