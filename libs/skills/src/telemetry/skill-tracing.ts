import { lazyTracer, SPAN_KIND_INTERNAL, SPAN_STATUS_ERROR, TraceAttributes } from './lazy-tracer';
import type { SkillContext } from '../skill-context';
import type { SkillCallResult } from '../skill-result';

/** This package's version, as its tracer says it (checked against package.json by a spec). */
export const SKILLS_PACKAGE_VERSION = '0.1.0';

/**
 * The tracer of the dispatcher. Through the OpenTelemetry API only (an optional peer: without it, no spans): with no
 * SDK registered it is the API's no-op tracer (a span costs a few property reads); once the application registers a
 * provider, spans go to it.
 */
const tracer = lazyTracer('@zmodu/skills', SKILLS_PACKAGE_VERSION);

/** What a dispatch may say about the call beyond its context: the model's tool-call id, when a model asked for it. */
export interface DispatchCall {
  /** The tool-call id the model gave (`gen_ai.tool.call.id`); the agent loop passes it. */
  readonly toolCallId?: string;
}

/**
 * `execute_tool {skill}` (INTERNAL), around one dispatch, allowed or refused, with the GenAI attributes and ours
 * (`zmodu.*`). A refused or failed call has `error.type` (the error the model saw: ToolDenied, PermissionDenied,
 * InvalidArguments, TenantRequired, Timeout, Cancelled, SkillFailed or a skill's own code) and status ERROR. Neither
 * the arguments nor the result are ever put in a span. The span is active while the handler runs: spans the handler
 * makes (a database query, an HTTP call) are its children.
 */
export function traceDispatch(
  ctx: SkillContext,
  skill: string,
  description: string | undefined,
  call: DispatchCall | undefined,
  work: () => Promise<SkillCallResult>,
): Promise<SkillCallResult> {
  const attributes: TraceAttributes = {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': skill,
    'gen_ai.tool.type': 'function',
  };
  if (description) attributes['gen_ai.tool.description'] = description;
  if (typeof call?.toolCallId === 'string' && call.toolCallId) attributes['gen_ai.tool.call.id'] = call.toolCallId;
  contextAttributes(ctx, attributes);
  return tracer.startActiveSpan(`execute_tool ${skill}`, { kind: SPAN_KIND_INTERNAL, attributes }, async (span) => {
    try {
      const result = await work();
      if (span.isRecording()) {
        span.setAttributes({
          'zmodu.skill.action': result.action,
          'zmodu.guard.decision': result.decision,
          'zmodu.skill.outcome': result.outcome,
          'zmodu.skill.tokens': result.tokens,
        });
        if (result.cause !== null) span.setAttribute('zmodu.guard.cause', result.cause);
        if (!result.ok) {
          const type = result.error?.error ?? '_OTHER';
          span.setAttribute('error.type', type);
          span.setStatus({ code: SPAN_STATUS_ERROR, message: result.cause ?? result.error?.reason ?? type });
        }
      }
      return result;
    } catch (err) {
      // Only a context the dispatcher refuses to work with throws (InvalidSkillContextException): a programming error.
      span.setAttribute('error.type', (err as Error)?.name || '_OTHER');
      span.setStatus({ code: SPAN_STATUS_ERROR, message: (err as Error)?.name });
      throw err;
    } finally {
      span.end();
    }
  });
}

/** Ours, from the caller's context (never from the model): run, tenant, agent, and the proposal of a staged execution. */
function contextAttributes(ctx: SkillContext, attributes: TraceAttributes): void {
  if (!ctx || typeof ctx !== 'object') return;
  if (typeof ctx.runId === 'string' && ctx.runId) attributes['zmodu.run.id'] = ctx.runId;
  if (typeof ctx.tenantId === 'string' && ctx.tenantId) attributes['zmodu.tenant.id'] = ctx.tenantId;
  if (typeof ctx.agent === 'string' && ctx.agent) attributes['gen_ai.agent.name'] = ctx.agent;
  const proposalId = (ctx.staged as { proposalId?: unknown } | undefined)?.proposalId;
  if (typeof proposalId === 'string') attributes['zmodu.proposal.id'] = proposalId;
}
