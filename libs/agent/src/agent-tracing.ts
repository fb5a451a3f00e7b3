import { lazyTracer, SPAN_KIND_CLIENT, SPAN_KIND_INTERNAL, SPAN_STATUS_ERROR } from '@zmodu/skills/internal';
import type { TraceAttributes, TraceSpan } from '@zmodu/skills/internal';
import type { AgentRunResult, StopReason } from './agent-run';
import type { ModelProvider, ModelTurn } from './providers/model-provider';

/** This package's version, as its tracer says it (checked against package.json by a spec). */
export const AGENT_PACKAGE_VERSION = '0.1.0';

/** The OpenTelemetry API's tracer (an optional peer: without it, no spans): the no-op one until the application registers an SDK. */
const tracer = lazyTracer('@zmodu/agent', AGENT_PACKAGE_VERSION);

/** A run that ends so produced no answer: its span has `error.type` = the stop reason and status ERROR. */
const FAILED_STOPS: ReadonlySet<StopReason> = new Set<StopReason>([
  'max_steps',
  'budget_exhausted',
  'quota_unavailable',
  'aborted',
  'timed_out',
  'model_error',
  'empty_answer',
  'malformed_tool_calls',
]);

/** What a model provider is, for `gen_ai.provider.name` and `gen_ai.request.model`. */
export interface ModelIdentity {
  readonly provider: string;
  readonly model?: string;
}

/**
 * From `ModelProvider.name`, `provider:model` by convention ('openai:gpt-4o-mini', 'anthropic:claude-sonnet-4-5'): the
 * provider is the part before the first colon; a name without one is the provider, with no model known ('scripted').
 */
export function modelIdentity(provider: ModelProvider): ModelIdentity {
  const name = typeof provider?.name === 'string' && provider.name ? provider.name : '_OTHER';
  const colon = name.indexOf(':');
  if (colon <= 0 || colon === name.length - 1) return { provider: name };
  return { provider: name.slice(0, colon), model: name.slice(colon + 1) };
}

export interface RunTrace {
  readonly agent: string;
  readonly runId: string;
  readonly tenantId?: string | null;
  readonly model: ModelIdentity;
}

/**
 * `invoke_agent {agent}` (INTERNAL) around one run, active while it runs: its model calls (`chat`) and tool calls
 * (`execute_tool`, from the dispatcher) are its children, across every await of the loop.
 */
export function traceRun(run: RunTrace, work: () => Promise<AgentRunResult>): Promise<AgentRunResult> {
  const attributes: TraceAttributes = {
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.provider.name': run.model.provider,
    'gen_ai.agent.name': run.agent,
    'zmodu.run.id': run.runId,
  };
  if (run.model.model) attributes['gen_ai.request.model'] = run.model.model;
  if (typeof run.tenantId === 'string' && run.tenantId) attributes['zmodu.tenant.id'] = run.tenantId;
  return inSpan(`invoke_agent ${run.agent}`, SPAN_KIND_INTERNAL, attributes, work, (span, result) => {
    const m = result.metrics;
    span.setAttributes({
      'gen_ai.usage.input_tokens': m.tokensIn,
      'gen_ai.usage.output_tokens': m.tokensOut,
      'zmodu.run.stopped_reason': result.stoppedReason,
      'zmodu.run.steps': m.steps,
      'zmodu.run.tool_calls': m.toolCalls,
      'zmodu.run.tool_denied': m.toolDeniedTotal,
      'zmodu.run.pending_approvals': result.pendingApprovals.length,
    });
    if (result.budget) span.setAttribute('zmodu.run.budget', result.budget);
    if (FAILED_STOPS.has(result.stoppedReason)) failed(span, result.stoppedReason);
  });
}

/**
 * `chat {model}` (CLIENT; `chat` when the model is not known) around one model request, active while it runs (the HTTP
 * client's spans, if instrumented, are its children), with the token usage the provider reported. A failed request has
 * `error.type`: the client library's error class (RateLimitError, APIConnectionTimeoutError, ...).
 */
export function traceChat(model: ModelIdentity, work: () => Promise<ModelTurn>): Promise<ModelTurn> {
  const attributes: TraceAttributes = { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': model.provider };
  if (model.model) attributes['gen_ai.request.model'] = model.model;
  const name = model.model ? `chat ${model.model}` : 'chat';
  return inSpan(name, SPAN_KIND_CLIENT, attributes, work, (span, turn) => {
    const usage = turn?.usage;
    if (isCount(usage?.inputTokens)) span.setAttribute('gen_ai.usage.input_tokens', usage.inputTokens);
    if (isCount(usage?.outputTokens)) span.setAttribute('gen_ai.usage.output_tokens', usage.outputTokens);
    span.setAttribute('zmodu.model.tool_calls', Array.isArray(turn?.toolCalls) ? turn.toolCalls.length : 0);
    if (turn?.refusal) span.setAttribute('zmodu.model.refused', true);
  });
}

/** `work` in an active span; `done` adds what its value says (only when the span records); a throw is an error.type. */
function inSpan<T>(
  name: string,
  kind: number,
  attributes: TraceAttributes,
  work: () => Promise<T>,
  done: (span: TraceSpan, value: T) => void,
): Promise<T> {
  return tracer.startActiveSpan(name, { kind, attributes }, async (span) => {
    try {
      const value = await work();
      if (span.isRecording()) done(span, value);
      return value;
    } catch (err) {
      failed(span, errorType(err));
      throw err;
    } finally {
      span.end();
    }
  });
}

function failed(span: TraceSpan, type: string): void {
  span.setAttribute('error.type', type);
  span.setStatus({ code: SPAN_STATUS_ERROR, message: type });
}

/** A low-cardinality name for what was thrown: its class (the SDKs' error classes), never its message. */
function errorType(err: unknown): string {
  if (err instanceof Error) {
    const ctor = err.constructor?.name;
    return ctor && ctor !== 'Error' ? ctor : err.name || '_OTHER';
  }
  return '_OTHER';
}

function isCount(n: unknown): n is number {
  return typeof n === 'number' && Number.isFinite(n) && n >= 0;
}
