import { Injectable, Logger, Optional } from '@nestjs/common';
import { AgentAuditLog, AuditEntry, DenialCause, Guard, TokenQuota, AuditOutcome, QuotaBudget, Redactor } from '@zmodu/guard';
import { auditDigest, DENIED, QuotaKey } from '@zmodu/guard/internal';
import { scopeIdProblem } from '@zmodu/core';
import { InvalidSkillContextException } from './exceptions/invalid-context.exception';
import { SkillError } from './exceptions/skill.error';
import { standardProblem } from './standard-schema';
import { describeErrors } from './json-schema';
import { isStagedExecution, SkillContext, SkillInvocation } from './skill-context';
import { RegisteredSkill } from './skill-definition';
import { boundedName } from './caller-text';
import { estimateTokens, SkillCallResult, SkillErrorBody } from './skill-result';
import { DATABASE_UNAVAILABLE_TEXT, INVALID_CONTEXT_MESSAGE, MISSING_GUARD_MESSAGE } from './skill.messages';
import { isDatabaseUnavailable } from '@zmodu/core';
import { SkillRegistry } from './skill.registry';
import { withLogContext } from './telemetry/log-context';
import { DispatchCall, traceDispatch } from './telemetry/skill-tracing';

/** What a Standard Schema's validate found wrong: the call is refused as invalid arguments (never a handler's value). */
class RefusedArguments {
  constructor(readonly problems: Array<{ path: string; message: string }>) {}
}

type Cause = SkillCallResult['cause'];

const TIMED_OUT = Symbol('timed out');
const CANCELLED = Symbol('cancelled');

/**
 * The one path of every tool call (docs/architecture.md, the one path of a tool call): resolve, guard, permission,
 * arguments, tenant, handler under a deadline, then audit and metering, allowed or not.
 * It never throws for what a caller or a model sends; it returns a result with a JSON observation.
 *
 * Redaction happens here, once for every caller (the agent loop, MCP, the pipeline): the handler gets the real
 * arguments; the result's value and observation (what the model and MCP clients see), its `arguments`, the audit
 * entry and the log lines get copies with `x-sensitive` fields masked and secrets redacted (Redactor).
 */
@Injectable()
export class SkillDispatcher {
  private readonly logger = new Logger('SkillDispatcher');
  /** GuardModule's (its `redaction` options), or one with the defaults when the dispatcher is built by hand. */
  private readonly redactor: Redactor;

  constructor(
    private readonly registry: SkillRegistry,
    private readonly audit: AgentAuditLog,
    private readonly quota: TokenQuota,
    @Optional() redactor?: Redactor,
  ) {
    this.redactor = redactor ?? new Redactor();
  }

  /**
   * `call`: what the caller knows of the call beyond its context (the model's tool-call id). Traced as
   * `execute_tool {name}` and logged under the context's run, tenant and agent (see docs/observability.md, Traces and logs).
   */
  async dispatch(ctx: SkillContext, name: string, args: unknown, call?: DispatchCall): Promise<SkillCallResult> {
    return this.observed(ctx, name, call, () => this.dispatchUntraced(ctx, name, args));
  }

  private async dispatchUntraced(ctx: SkillContext, name: string, args: unknown): Promise<SkillCallResult> {
    assertContext(ctx);
    const started = performance.now();
    const skillName = typeof name === 'string' ? name : String(name);
    // 1. Resolve. An unknown name is refused like a name missing from the allow list, whatever
    // the policy says of it; a staged skill runs only for the proposal pipeline.
    const skill = this.registry.get(skillName);
    const action = skill ? skill.action : 'execute';
    const argsText = safeStringify(args);
    const cost = skill?.cost ?? estimateTokens(argsText ?? '');
    // A name that is no skill came from the caller (a model may send anything): audited, logged and returned bounded.
    const shown = skill ? skill.name : this.shownName(skillName);

    // 1b. Who is calling: a tenant or user id that is not one (scopeIdProblem: a control, format or invisible character,
    // an unnormalised form, '0', ...) is refused before anything reads or charges under it, and the entry is written
    // without it (under no tenant): an id that looks like another is never stored as one.
    const identity = callerIdProblem(ctx);
    if (identity)
      return this.finish(withoutCaller(ctx), skillName, action, started, argsText, 'denied', 'tenant_required', 'tenant_required', {
        error: 'TenantRequired',
        reason: 'invalid_caller_id',
        message: identity,
      });

    // 2. Guard: deny, allow, execute switch, budget (in-memory budget, then the persistent quota).
    // The policy first: a staged skill that the caller's policy does not list is refused as not listed, so that a
    // refusal tells nothing of which names exist; only a call the policy allows learns that it is staged.
    const evaluated = skill ? ctx.guard.evaluate(action, skillName, cost) : DENIED.denied_not_listed;
    const decision = evaluated.allowed && skill!.staged !== isStagedExecution(ctx.staged) ? DENIED.denied_staged : evaluated;
    // A staged execution was decided by the pipeline (and its approvers): it is metered, not refused for the quota.
    if (decision.allowed && !isStagedExecution(ctx.staged)) {
      // The cost is reserved with the check, atomically in the store: callers at once cannot all pass a nearly spent budget.
      const quota = await this.quotaState(ctx, cost);
      if (quota === 'unavailable') {
        // Fail closed, under a cause of its own: the budget is not known to be spent, it cannot be read.
        return this.finish(ctx, shown, action, started, argsText, 'denied', 'quota_unavailable', 'error', {
          error: 'ToolDenied',
          reason: 'quota_unavailable',
        });
      }
      if (quota !== 'ok') {
        ctx.guard.commit(DENIED.denied_budget, cost);
        const denied = await this.finish(ctx, shown, action, started, argsText, 'denied', 'denied_budget', 'denied', {
          error: 'ToolDenied',
          reason: 'denied_budget',
        });
        return { ...denied, budget: quota };
      }
    }
    ctx.guard.commit(decision, cost);
    if (!decision.allowed || !skill) {
      if (decision.cause === 'denied_staged' && skill?.staged === false)
        this.logger.error(`a staged context dispatched '${skillName}', which is not a staged skill: refused`);
      return this.finish(ctx, shown, action, started, argsText, 'denied', decision.cause as DenialCause, 'denied', {
        error: 'ToolDenied',
        reason: decision.cause as string,
      });
    }

    // 3. Permission.
    if (skill.requiredPermission !== undefined && !ctx.permissions.includes(skill.requiredPermission)) {
      return this.finish(ctx, shown, action, started, argsText, 'allowed', 'missing_permission', 'forbidden', {
        error: 'PermissionDenied',
        reason: 'missing_permission',
        permission: skill.requiredPermission,
      });
    }

    // 4. Arguments against the JSON Schema.
    const parsed = args === undefined || args === null ? {} : args;
    if (typeof parsed !== 'object' || Array.isArray(parsed) || argsText === undefined) {
      return this.finish(ctx, shown, action, started, argsText, 'allowed', 'invalid_arguments', 'invalid_arguments', {
        error: 'InvalidArguments',
        reason: typeof parsed === 'string' ? 'arguments are not valid JSON: send one JSON object' : 'arguments must be a JSON object',
      });
    }
    if (!skill.validate(parsed)) {
      return this.finish(ctx, shown, action, started, argsText, 'allowed', 'invalid_arguments', 'invalid_arguments', {
        error: 'InvalidArguments',
        reason: 'arguments do not match the skill parameters',
        problems: describeErrors(skill.validate.errors),
      });
    }

    // 5. Tenant: a tenant-scoped skill without a tenant fails closed.
    if (skill.tenantScoped && !ctx.tenantId) {
      return this.finish(ctx, shown, action, started, argsText, 'allowed', 'tenant_required', 'tenant_required', {
        error: 'TenantRequired',
        reason: 'tenant_scope_unavailable',
      });
    }

    // 6. Handler under the deadline.
    return this.run(ctx, skill, parsed as Record<string, unknown>, started, argsText);
  }

  /**
   * Refuse a call without running it, for a cause the caller decided (the agent's turn cap):
   * counted by the guard, audited and answered like any other denial. `details` join the error body (the model's
   * observation and the audited result), e.g. how many calls a turn-cap summary stands for.
   */
  async deny(
    ctx: SkillContext,
    name: string,
    args: unknown,
    cause: DenialCause,
    call?: DispatchCall,
    details?: Readonly<Record<string, unknown>>,
  ): Promise<SkillCallResult> {
    return this.observed(ctx, name, call, () => this.denyUntraced(ctx, name, args, cause, details));
  }

  /**
   * A span and the log context around a dispatch or a denial. A name that is no registered skill came from the caller
   * (a model may send anything): the span shows it as the audit does (shownName).
   */
  private observed(ctx: SkillContext, name: unknown, call: DispatchCall | undefined, work: () => Promise<SkillCallResult>) {
    const skillName = typeof name === 'string' ? name : String(name);
    const skill = this.registry.get(skillName);
    const shown = skill ? skillName : this.shownName(skillName);
    const shownCall = call?.toolCallId === undefined ? call : { ...call, toolCallId: this.shownName(call.toolCallId) };
    return withLogContext(ctx, () => traceDispatch(ctx, shown, skill?.description, shownCall, work));
  }

  /** A caller's name for a skill that is none (or a tool-call id): redacted, control characters shown as U+FFFD, cut. */
  private shownName(name: unknown): string {
    return boundedName(name, (text) => this.redactor.redactText(text));
  }

  private async denyUntraced(
    ctx: SkillContext,
    name: string,
    args: unknown,
    cause: DenialCause,
    details: Readonly<Record<string, unknown>> | undefined,
  ): Promise<SkillCallResult> {
    assertContext(ctx);
    const started = performance.now();
    const skillName = typeof name === 'string' ? name : String(name);
    const skill = this.registry.get(skillName);
    ctx.guard.commit(DENIED[cause]);
    return this.finish(
      ctx,
      skill ? skill.name : this.shownName(skillName),
      skill?.action ?? 'execute',
      started,
      safeStringify(args),
      'denied',
      cause,
      'denied',
      {
        ...(details ?? {}),
        error: 'ToolDenied',
        reason: cause,
      },
    );
  }

  private async run(
    ctx: SkillContext,
    skill: RegisteredSkill,
    args: Record<string, unknown>,
    started: number,
    argsText: string,
  ): Promise<SkillCallResult> {
    // The run is over (its deadline passed, or its caller left): a handler that ignores its signal must not start now.
    if (ctx.signal?.aborted)
      return this.finish(ctx, skill.name, skill.action, started, argsText, 'allowed', null, 'cancelled', {
        error: 'Cancelled',
        reason: 'run_cancelled',
        message: 'the run was over before this call started; it did not run',
      });
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    let onParentAbort: (() => void) | undefined;
    const deadline = new Promise<typeof TIMED_OUT | typeof CANCELLED>((resolve) => {
      timer = setTimeout(() => {
        controller.abort(new Error(`skill '${skill.name}' exceeded its ${skill.timeoutMs} ms deadline`));
        resolve(TIMED_OUT);
      }, skill.timeoutMs);
      if (ctx.signal) {
        onParentAbort = () => {
          controller.abort(ctx.signal?.reason);
          resolve(CANCELLED);
        };
        if (ctx.signal.aborted) onParentAbort();
        else ctx.signal.addEventListener('abort', onParentAbort, { once: true });
      }
    });
    const invocation: SkillInvocation = {
      guard: ctx.guard,
      tenantId: ctx.tenantId,
      userId: ctx.userId,
      permissions: ctx.permissions,
      runId: ctx.runId,
      agent: ctx.agent,
      signal: controller.signal,
      skill: skill.name,
      ...(isStagedExecution(ctx.staged) ? { staged: ctx.staged } : {}),
    };
    try {
      // A Standard Schema's own validate makes the handler's argument (its defaults and transforms), under the deadline.
      const work = Promise.resolve().then(async () => {
        if (!skill.standard) return skill.handler(args, invocation);
        const checked = await skill.standard['~standard'].validate(args);
        if (checked.issues) return new RefusedArguments(checked.issues.map(standardProblem));
        return skill.handler(checked.value as Record<string, unknown>, invocation);
      });
      // A handler that ignores its signal may still settle later: keep that from being unhandled, and say so when it
      // finishes after its call was answered `timeout` (its effect happened after all).
      work.then(
        () => controller.signal.aborted && this.logger.warn(`skill '${skill.name}' (run ${ctx.runId}) finished after its call was cut off`),
        () => undefined,
      );
      const value = await Promise.race([work, deadline]);
      if (value === TIMED_OUT || value === CANCELLED) {
        const reason = value === TIMED_OUT ? 'deadline_exceeded' : 'cancelled';
        return this.finish(ctx, skill.name, skill.action, started, argsText, 'allowed', null, 'timeout', {
          error: 'Timeout',
          reason,
          timeoutMs: skill.timeoutMs,
        });
      }
      if (value instanceof RefusedArguments)
        return this.finish(ctx, skill.name, skill.action, started, argsText, 'allowed', 'invalid_arguments', 'invalid_arguments', {
          error: 'InvalidArguments',
          reason: 'arguments do not match the skill parameters',
          problems: value.problems,
        });
      const raw = safeStringify(value === undefined ? null : value);
      if (raw === undefined) {
        this.logger.error(`skill '${skill.name}' returned a value that is not JSON-serializable`);
        return this.finish(ctx, skill.name, skill.action, started, argsText, 'allowed', null, 'error', {
          error: 'SkillFailed',
          reason: 'result_not_serializable',
        });
      }
      // Redacted before anyone sees it; serializable (checked above), so the walk meets no cycle. Class instances
      // become plain objects of their own fields; dates and buffers are kept as they are.
      const redacted = this.redactor.redact(value === undefined ? null : value);
      return this.finish(
        ctx,
        skill.name,
        skill.action,
        started,
        argsText,
        'allowed',
        null,
        'ok',
        undefined,
        redacted,
        JSON.stringify(redacted),
      );
    } catch (err) {
      const body: SkillErrorBody =
        err instanceof SkillError
          ? { ...(err.details ?? {}), error: err.code, reason: err.reason, message: err.message }
          : isDatabaseUnavailable(err)
            ? { error: 'SkillFailed', reason: 'database_unavailable', message: DATABASE_UNAVAILABLE_TEXT, retryable: true }
            : { error: 'SkillFailed', reason: 'internal_error' };
      if (!(err instanceof SkillError))
        this.logger.error(this.redactor.redactText(`skill '${skill.name}' failed: ${(err as Error)?.stack ?? String(err)}`));
      return this.finish(ctx, skill.name, skill.action, started, argsText, 'allowed', null, 'error', body);
    } finally {
      if (timer) clearTimeout(timer);
      if (onParentAbort) ctx.signal?.removeEventListener('abort', onParentAbort);
    }
  }

  /** 7. Audit entry and metering, for every call. */
  private async finish(
    ctx: SkillContext,
    skill: string,
    action: SkillCallResult['action'],
    started: number,
    argsText: string | undefined,
    decision: 'allowed' | 'denied',
    cause: Cause,
    outcome: AuditOutcome,
    error?: SkillErrorBody,
    value?: unknown,
    valueText?: string,
  ): Promise<SkillCallResult> {
    const shownError = error && (this.redactor.redact(error) as SkillErrorBody);
    const observation = shownError ? JSON.stringify(shownError) : (valueText as string);
    const shownArgs = this.shownArguments(skill, argsText);
    const durationMs = performance.now() - started;
    const tokens = decision === 'allowed' ? estimateTokens(argsText ?? '') + estimateTokens(observation) : 0;
    // A skill whose payloads carry content that must not outlive its store (memory notes) has the audit keep digests.
    const kept = this.registry.get(skill)?.audit;
    const auditedArgs = kept?.args === 'digest' ? auditDigest(shownArgs) : shownArgs;
    const entry: AuditEntry = {
      runId: ctx.runId,
      agent: ctx.agent ?? null,
      tenantId: ctx.tenantId ?? null,
      userId: ctx.userId ?? null,
      skill,
      action,
      decision,
      cause,
      outcome,
      durationMs,
      tokens,
      at: new Date(),
      ...(auditedArgs !== undefined ? { args: auditedArgs } : {}),
      result: shownError ?? (kept?.result === 'digest' ? auditDigest(value) : value),
      ...(isStagedExecution(ctx.staged) ? { proposalId: ctx.staged.proposalId, approvers: ctx.staged.approvers } : {}),
    };
    // A staged execution that succeeded: its entry is written in the execution's transaction, so it commits with the
    // effect (a process killed right after the commit loses no entry) or, if the transaction fails, not at all.
    if (outcome === 'ok' && isStagedExecution(ctx.staged)) await this.audit.recordWithin(ctx.staged.transaction, entry);
    else this.audit.record(entry);
    if (tokens > 0) {
      const charge = this.quota.chargeQuietly(quotaKey(ctx), tokens);
      // A staged call runs inside the pipeline's open transaction: on one embedded session a charge
      // awaited here would wait for that transaction to end. It is charged once the session is free.
      if (!isStagedExecution(ctx.staged)) await charge;
    }
    const shown = shownArgs !== undefined ? { arguments: shownArgs } : {};
    return shownError
      ? { ok: false, skill, action, decision, cause, outcome, error: shownError, observation, durationMs, tokens, ...shown }
      : { ok: true, skill, action, decision, cause, outcome, value, observation, durationMs, tokens, ...shown };
  }

  /** The arguments as they may be shown: `x-sensitive` fields of the skill's parameters masked, secrets redacted. */
  private shownArguments(skill: string, argsText: string | undefined): unknown {
    if (argsText === undefined) return undefined;
    const args: unknown = JSON.parse(argsText);
    const parameters = this.registry.get(skill)?.parameters;
    // A model's malformed arguments arrive as a string: redacted as text.
    return this.redactor.redact(parameters && typeof args !== 'string' ? this.redactor.maskSensitive(args, parameters) : args);
  }

  /** 'ok', the budget that ran out, or 'unavailable' when the quota store cannot be read. */
  private async quotaState(ctx: SkillContext, cost: number): Promise<'ok' | QuotaBudget | 'unavailable'> {
    try {
      const status = await this.quota.check(quotaKey(ctx), cost);
      return status.allowed ? 'ok' : (status.exhausted ?? 'tenant');
    } catch (err) {
      // Fail closed: a quota that cannot be read is a quota that is not granted.
      this.logger.error(this.redactor.redactText(`token quota check failed, refusing the call (quota_unavailable): ${String(err)}`));
      return 'unavailable';
    }
  }
}

function quotaKey(ctx: SkillContext): QuotaKey {
  return { tenantId: ctx.tenantId ?? '', agent: ctx.agent ?? '', userId: ctx.userId ?? null };
}

/** Why the context's tenant or user id (when it has one: empty counts as none, as createSkillContext has it) is not an id, or null. */
function callerIdProblem(ctx: SkillContext): string | null {
  return (ctx.tenantId ? scopeIdProblem('tenantId', ctx.tenantId) : null) ?? (ctx.userId ? scopeIdProblem('userId', ctx.userId) : null);
}

/** The context without its tenant and user: what the entry of a call refused for its caller's ids is written under. */
function withoutCaller(ctx: SkillContext): SkillContext {
  return { ...ctx, tenantId: undefined, userId: undefined };
}

function safeStringify(value: unknown): string | undefined {
  try {
    return JSON.stringify(value === undefined ? {} : value);
  } catch {
    return undefined;
  }
}

function assertContext(ctx: SkillContext): void {
  if (!ctx || !(ctx.guard instanceof Guard)) throw new InvalidSkillContextException(MISSING_GUARD_MESSAGE);
  if (!Array.isArray(ctx.permissions))
    throw new InvalidSkillContextException(INVALID_CONTEXT_MESSAGE('permissions must be an array of permission codes'));
  if (typeof ctx.runId !== 'string' || ctx.runId === '')
    throw new InvalidSkillContextException(INVALID_CONTEXT_MESSAGE('runId must be a non-empty string (createSkillContext makes one)'));
}
