import { AsyncLocalStorage } from 'node:async_hooks';

/** Who a log line was written for: the run, its tenant and its agent. Every field is absent outside a run or a call. */
export interface ZmoduLogContext {
  readonly runId?: string;
  readonly tenantId?: string;
  readonly agent?: string;
}

const NONE: ZmoduLogContext = Object.freeze({});
const storage = new AsyncLocalStorage<ZmoduLogContext>();

/**
 * The run a log line is written in: `{ runId, tenantId, agent }` inside an agent run or a tool call (whatever its caller:
 * the agent loop, MCP, the proposal pipeline, HTTP), `{}` outside one. Made for pino's `mixin` (zmoduPinoOptions wires it),
 * and usable with any logger. The object is fresh on each call: a logger may add to it.
 */
export function zmoduLogContext(): { runId?: string; tenantId?: string; agent?: string } {
  return { ...(storage.getStore() ?? NONE) };
}

/**
 * @internal For the agent loop and the dispatcher: runs `work` with the log context of `ctx` (its run id, tenant and
 * agent; the fields that are not non-empty strings are left out). Values come from the caller's context, never from a model.
 */
export function withLogContext<T>(ctx: { runId?: unknown; tenantId?: unknown; agent?: unknown } | null | undefined, work: () => T): T {
  const context: { runId?: string; tenantId?: string; agent?: string } = {};
  if (ctx && typeof ctx === 'object') {
    if (typeof ctx.runId === 'string' && ctx.runId) context.runId = ctx.runId;
    if (typeof ctx.tenantId === 'string' && ctx.tenantId) context.tenantId = ctx.tenantId;
    if (typeof ctx.agent === 'string' && ctx.agent) context.agent = ctx.agent;
  }
  return storage.run(Object.freeze(context), work);
}
