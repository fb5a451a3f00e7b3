import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { auditPolicy, Guard, GuardPolicy, PolicyHealth, QuotaBudget, Redactor, RuntimeEvents, TokenQuota } from '@zmodu/guard';
import { auditDigest, GuardStats, QuotaKey } from '@zmodu/guard/internal';
import { scopeIdProblem } from '@zmodu/core';
import { InvalidGoalException } from './exceptions/invalid-goal.exception';
import { boundedName, withLogContext } from '@zmodu/skills/internal';
import { createSkillContext, SkillCallResult, SkillContext, SkillDispatcher, SkillRegistry } from '@zmodu/skills';
import { modelIdentity, traceChat, traceRun } from './agent-tracing';
import { AgentMetrics, AgentMetricsSnapshot } from './agent-metrics';
import {
  AgentRunContext,
  AgentRunEvent,
  AgentRunResult,
  AgentStep,
  ExhaustedBudget,
  PendingApproval,
  StopReason,
  ToolCallRecord,
} from './agent-run';
import {
  AgentSpec,
  DEFAULT_MAX_STEPS,
  DEFAULT_MAX_TOOL_CALLS_PER_TURN,
  DEFAULT_MAX_MALFORMED_TOOL_CALLS,
  DEFAULT_RUN_TIMEOUT_MS,
  MAX_RUN_TIMEOUT_MS,
} from './agent-definition';
import { runDeadline, RunDeadline } from './run-deadline';
import { estimateUsage } from './providers/usage-estimate';
import { ChatMessage, ModelProvider, ModelTurn, TokenUsage, ToolCall, ToolSpec } from './providers/model-provider';
import { oneLine, safeText } from './error-text';
import { TurnTextRedactor } from './turn-text-redactor';
import { JournalCursor, journaledTurn, RunJournalStoppedException } from './journal/journal-cursor';
import { ARGUMENTS_NOT_KEPT_MESSAGE, LATE_DECISION_MESSAGE, OUTCOME_UNKNOWN_MESSAGE } from './agent.messages';

/** The longest error text a run result (and a log line of the agent) carries, after redaction. */
export const RUN_ERROR_MAX_CHARS = 500;
/** The longest tool-call id of a model that is kept; a longer one, or one with other than printable ASCII, is replaced. */
const TOOL_CALL_ID_MAX_LENGTH = 128;
const TOOL_CALL_ID = new RegExp(`^[\\x21-\\x7e]{1,${TOOL_CALL_ID_MAX_LENGTH}}$`);
/** The most distinct names of refused calls a turn-cap summary lists in its audited arguments. */
const SUMMARY_NAMES_MAX = 8;

/**
 * A guarded agent: model turn, tool calls (each through the one dispatcher), observations
 * back to the model, until a final answer or `maxSteps`. Build it through AgentModule (or
 * `new Agent(spec, ...)` after validateAgentSpec); there is no agent without a guard.
 */
export class Agent {
  readonly name: string;
  readonly metrics = new AgentMetrics();
  /** Guard counters across all runs of this agent. */
  readonly guardStats = new GuardStats();
  private readonly logger: Logger;
  private readonly policy: GuardPolicy;
  private estimatedUsage = false;

  constructor(
    readonly spec: AgentSpec,
    private readonly registry: SkillRegistry,
    private readonly dispatcher: SkillDispatcher,
    private readonly quota: TokenQuota,
    /** Told when a run ends (a `run` event: agent, stop reason, duration), e.g. for metrics. */
    private readonly events?: RuntimeEvents,
    /**
     * What the run's result, events and log lines pass (GuardModule's, shared with the dispatcher and the logs). The
     * provider's keys are registered with it (ModelProvider.secrets), so that it masks them wherever they appear.
     */
    private readonly redactor: Redactor = new Redactor(),
  ) {
    this.name = spec.name;
    redactor.addSecrets(providerSecrets(spec.provider));
    this.logger = new Logger(`Agent:${spec.name}`);
    const tokensPerRun = spec.budget?.tokensPerRun;
    this.policy =
      tokensPerRun === undefined ? spec.guard : { ...spec.guard, budget: Math.min(tokensPerRun, spec.guard.budget ?? Infinity) };
  }

  /** The policy health report (auditPolicy) of this agent against the registry; a `skills` filter's admin skills are flagged. */
  auditPolicy(): PolicyHealth {
    const skills = this.spec.skills;
    const offeredByFilter =
      typeof skills === 'function'
        ? this.registry
            .definitions()
            .filter((d) => skills(d))
            .map((d) => d.name)
        : [];
    return auditPolicy(this.registry, this.policy, { offeredByFilter });
  }

  /** The tools offered to the model. A staged skill is never one: only the pipeline runs it (propose it with approval.submit). */
  tools(): ToolSpec[] {
    const skills = this.spec.skills;
    const defs = Array.isArray(skills)
      ? this.registry.definitions(skills as readonly string[])
      : this.registry.definitions().filter((d) => (skills as (s: typeof d) => boolean)(d));
    return defs.filter((d) => !d.staged).map((d) => ({ name: d.name, description: d.description, parameters: d.parameters }));
  }

  async run(goal: string, context: AgentRunContext = {}): Promise<AgentRunResult> {
    // A goal an HTTP caller can send wrong: InvalidGoalException, which the edge answers 400 (@zmodu/http).
    if (typeof goal !== 'string') throw new InvalidGoalException('Agent.run needs the goal as a string');
    if (goal.trim() === '') throw new InvalidGoalException('the goal is empty: give Agent.run a non-blank goal');
    // The run's model turns are charged, and its memory read, under these ids: one that is not an id (scopeIdProblem:
    // a control, format or invisible character, an unnormalised form, ...) runs nothing. Empty counts as none.
    for (const field of ['tenantId', 'userId'] as const) {
      const problem = context[field] ? scopeIdProblem(field, context[field]) : null;
      if (problem) throw new InvalidGoalException(problem);
    }
    const timeoutMs = context.timeoutMs ?? this.spec.runTimeoutMs ?? DEFAULT_RUN_TIMEOUT_MS;
    if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_RUN_TIMEOUT_MS)
      throw new RangeError(
        `Agent.run: timeoutMs must be a whole number of milliseconds from 1 to ${MAX_RUN_TIMEOUT_MS} (got ${timeoutMs}).`,
      );
    // The run's deadline and the caller's abort, as one signal: the model request and every tool call see it.
    const deadline = runDeadline(context.signal, timeoutMs);
    // One span and one log context per run (docs/observability.md, Traces and logs): its model and tool calls nest under it.
    const run = { agent: this.name, runId: context.runId ?? randomUUID(), tenantId: context.tenantId };
    try {
      return await withLogContext(run, () =>
        traceRun({ ...run, model: modelIdentity(this.spec.provider) }, () =>
          this.runUntil(goal, { ...context, runId: run.runId }, deadline),
        ),
      );
    } finally {
      deadline.dispose();
    }
  }

  private async runUntil(goal: string, context: AgentRunContext, deadline: RunDeadline): Promise<AgentRunResult> {
    const started = performance.now();
    const runId = context.runId ?? randomUUID();
    const signal = deadline.signal;
    const guard = new Guard(this.policy, { stats: this.guardStats });
    const ctx = createSkillContext({
      guard,
      tenantId: context.tenantId,
      userId: context.userId,
      permissions: context.permissions ?? [],
      runId,
      agent: this.name,
      signal,
    });
    const quotaKey: QuotaKey = { tenantId: ctx.tenantId ?? '', agent: this.name, userId: ctx.userId ?? null };
    const metrics = new AgentMetrics();
    metrics.runs = 1;
    const steps: AgentStep[] = [];
    const tools = this.tools();
    const system = await this.systemPrompt(ctx.tenantId, ctx.userId, goal);
    const messages: ChatMessage[] = [{ role: 'user', content: goal }];
    const emit = this.emitter(runId, context.onEvent);
    const maxSteps = this.spec.maxSteps ?? DEFAULT_MAX_STEPS;
    const perTurn = this.spec.maxToolCallsPerTurn ?? DEFAULT_MAX_TOOL_CALLS_PER_TURN;
    const malformedAllowed = this.spec.maxMalformedToolCalls ?? DEFAULT_MAX_MALFORMED_TOOL_CALLS;
    let malformed = 0;
    let answer = '';
    let stoppedReason: StopReason = 'max_steps';
    let error: string | undefined;
    let budget: ExhaustedBudget | undefined;
    // The run's journal (a worker's run): the turns and calls of earlier attempts are replayed, not asked or run again.
    // A worker's run that puts a proposal in front of a human waits for the decision instead of going on without it.
    const mayWait = context.journal !== undefined && context.waitForApprovals === true;
    // resumeOn 'each': a run resumed on one decision of several goes on, told that the others are pending (they are
    // owed to it), and at its end waits for those still owed; each is then told as a message where it comes.
    const eachDecision = mayWait && this.spec.resumeOn === 'each';
    const owed = new Map<string, PendingApproval>();
    const toldLate = new Set<string>();
    // What the run waits on when it stops `waiting`: the proposals its calls put in front of a human (never a tool
    // result that merely names one), and those owed to it.
    let waitedOn: PendingApproval[] = [];
    const journal = new JournalCursor(context.journal, eachDecision);

    try {
      for (let index = 0; index < maxSteps; index++) {
        if (signal.aborted) {
          [stoppedReason, error] = deadline.stop();
          break;
        }
        // A turn an earlier attempt of this run had answered: it was checked and charged then, and is not asked again.
        const replayed = journal.replaying ? journal.turn(index) : undefined;
        let turn: ModelTurn;
        let usage: TokenUsage;
        if (replayed) {
          turn = replayed;
          usage = replayed.usage;
        } else {
          if (guard.remainingBudget <= 0) {
            stoppedReason = 'budget_exhausted';
            budget = 'run';
            break;
          }
          const quota = await this.quotaState(quotaKey);
          if (quota === 'unavailable') {
            stoppedReason = 'quota_unavailable';
            error = 'the token quota could not be checked (its store failed); the run stopped';
            break;
          }
          if (quota !== 'ok') {
            stoppedReason = 'budget_exhausted';
            budget = quota;
            break;
          }
          let asked: ModelTurn;
          // The turn's text as a stream shows it: redacted as one text (a secret split across deltas is masked too).
          const streamed = emit ? new TurnTextRedactor(this.redactor) : undefined;
          const shown = (text: string) => {
            if (text) emit?.({ type: 'delta', step: index, text });
          };
          try {
            asked = await traceChat(modelIdentity(this.spec.provider), () =>
              this.spec.provider.complete({
                system,
                messages,
                tools,
                signal,
                ...(streamed ? { onTextDelta: (text: string) => shown(streamed.push(String(text))) } : {}),
              }),
            );
          } catch (err) {
            stoppedReason = 'model_error';
            // Whoever reads the run (its result, its events, the worker's record, the log) reads this: redacted, bounded.
            error = this.shownError(err);
            if (signal.aborted) [stoppedReason, error] = deadline.stop();
            this.logger.warn(`run ${runId}: model error: ${error}`);
            break;
          }
          // What the stream held back, at the turn's end (a turn that failed shows only what it had released).
          if (streamed) shown(streamed.end());
          // A provider (ours given a broken server, or an application's own) that returns something that is not a
          // ModelTurn ends the run as a model error, never as an exception or a turn of garbage.
          const problem = turnProblem(asked);
          if (problem) {
            stoppedReason = 'model_error';
            error = `the model provider ${this.spec.provider.name} returned a malformed turn: ${problem}`;
            this.logger.warn(`run ${runId}: model error: ${error}`);
            break;
          }
          turn = asked;
          usage = this.chargeableUsage(turn, system, messages, tools);
        }
        const tokens = usage.inputTokens + usage.outputTokens;
        metrics.tokensIn += usage.inputTokens;
        metrics.tokensOut += usage.outputTokens;
        metrics.steps++;
        guard.spend(tokens);
        if (!replayed) {
          await this.quota.chargeQuietly(quotaKey, tokens);
          // Written before anything the turn asks for runs: a retried run replays it instead of asking the model again.
          if (journal.active)
            await journal.turnAnswered(
              index,
              { system, messages, tools },
              journaledTurn(
                turn,
                usage,
                (name, args) => this.journaledArgs(name, args),
                (text) => this.redactor.redactText(text, { count: false }),
              ),
            );
        }
        // The model's text as callers read it (the conversation keeps it as the model wrote it).
        const text = this.redactor.redactText(turn.text);
        const step: AgentStep = { index, text, toolCalls: [], usage };
        steps.push(step);
        // The calls the turn answers: the first `perTurn`, run (or refused) one by one; every later one, and those the
        // provider did not keep, in ONE summary denial answered to the first of them (the anchor). The rest never reach
        // the dispatcher, the audit, the result or the conversation.
        const calls = turn.toolCalls.map((c, i) => conversationCall(c, index, i));
        const answered = calls.slice(0, perTurn);
        const refused = calls.length - answered.length + (turn.omittedToolCalls ?? 0);
        const anchor = calls[perTurn] as ToolCall | undefined;
        messages.push({ role: 'assistant', content: turn.text, toolCalls: anchor ? [...answered, anchor] : answered });
        if (turn.refusal) {
          answer = this.redactor.redactText(turn.refusal);
          stoppedReason = 'refused';
          break;
        }
        if (calls.length === 0 && refused === 0) {
          answer = text;
          stoppedReason = turn.text.trim() ? 'final' : 'empty_answer';
          if (stoppedReason === 'empty_answer') error = 'the model answered nothing (no text and no tool call)';
          if (eachDecision && stoppedReason === 'final') {
            // Decisions owed to the run that came after it went on: told now, and the model goes on from them.
            const late = journal.lateDecisions();
            if (late.length > 0) {
              for (const d of late) {
                messages.push({ role: 'user', content: LATE_DECISION_MESSAGE(d.proposalId, d.observation) });
                owed.delete(d.proposalId);
                toldLate.add(d.proposalId);
              }
              // The model goes on from them, if a step is left: otherwise the run ends at its step limit, not 'final'.
              stoppedReason = 'max_steps';
              continue;
            }
            if (owed.size > 0) {
              stoppedReason = 'waiting';
              waitedOn = [...owed.values()];
              break;
            }
          }
          break;
        }
        // Arguments that are not JSON reach the model again as a tool error it can correct (the dispatcher refuses
        // them as invalid_arguments and audits the attempt), a few times per run; past that the run stops.
        malformed += answered.filter((c) => typeof c.arguments === 'string').length;
        if (malformed > malformedAllowed) {
          stoppedReason = 'malformed_tool_calls';
          error = `the model sent tool-call arguments that are not JSON ${malformed} times (at most ${malformedAllowed} are answered)`;
          break;
        }
        answer = text;
        const told = (call: ToolCall | undefined, record: ToolCallRecord) => {
          metrics.toolCalls++;
          if (record.cause !== null) metrics.denial(record.cause as never);
          else if (!record.ok) metrics.toolErrors++;
          step.toolCalls.push(record);
          emit?.({ type: 'step', step: index, toolCall: record });
          if (call) messages.push({ role: 'tool', toolCallId: call.id, name: call.name, content: record.observation });
        };
        // Each call as the journal holds it: done by an earlier attempt (its record, replayed), in flight when that
        // attempt's process died (repeated only if the skill says a repeat has no further effect), or not begun.
        const waiting: PendingApproval[] = [];
        let decidedHere = 0;
        const kept = (record: ToolCallRecord) => (journal.active ? this.journaledRecord(record) : record);
        const through = async (call: ToolCall | undefined, i: number, sent: string, dispatch: () => Promise<SkillCallResult>) => {
          const held = journal.replaying ? journal.call(index, i) : ({ kind: 'none' } as const);
          if (held.kind === 'done') {
            guard.spend(held.spent);
            if (held.decided) decidedHere++;
            return told(call, held.record);
          }
          if (held.kind === 'waiting') {
            guard.spend(held.spent);
            const pending = pendingOfCall(held.record);
            if (pending) waiting.push(pending);
            return told(call, held.record);
          }
          const skill = this.registry.get(sent);
          if (held.kind === 'in_flight' && skill && !skill.idempotent) {
            const record = this.outcomeUnknown(call?.id ?? `zmodu_${index + 1}_${i + 1}`, skill.name, call?.arguments);
            this.logger.warn(
              `run ${runId}: ${skill.name} was in flight when an earlier attempt stopped: not repeated, its outcome is unknown`,
            );
            await journal.callDone(index, i, kept(record), 0, true);
            return told(call, record);
          }
          // A replayed turn holds the arguments as the journal kept them: with x-sensitive fields masked (or a digest),
          // they are not what the model sent, and a call not done yet is never run with them: the model asks again.
          if (replayed && (replayed.toolCalls[i] as { masked?: true } | undefined)?.masked) {
            const record = this.argumentsNotKept(
              call?.id ?? `zmodu_${index + 1}_${i + 1}`,
              skill?.name ?? boundedName(sent),
              call?.arguments,
            );
            await journal.callDone(index, i, kept(record), 0, true);
            return told(call, record);
          }
          if (held.kind === 'none' && skill && skill.action !== 'read') await journal.callStarting(index, i, skill.name);
          const before = guard.spent;
          const record = toRecord(call?.id ?? `zmodu_${index + 1}_cap`, await dispatch());
          // Only a proposing skill's result puts a proposal in front of a human (a read or a tool echoing the model never does).
          const pending = mayWait && skill?.action === 'propose' ? pendingOfCall(record) : null;
          if (pending) {
            await journal.callWaiting(index, i, pending.proposalId, kept(record), guard.spent - before);
            waiting.push(pending);
            return told(call, record);
          }
          // A read's outcome goes with the next write (a retry that lost it reads again); any other is written now.
          await journal.callDone(index, i, kept(record), guard.spent - before, skill !== undefined && skill.action !== 'read');
          told(call, record);
        };
        for (const [i, call] of answered.entries()) {
          const sent = turn.toolCalls[i].name;
          await through(call, i, sent, () => this.dispatcher.dispatch(ctx, sent, call.arguments, { toolCallId: call.id }));
        }
        if (refused > 0) await through(anchor, answered.length, '', () => this.turnCapSummary(ctx, turn, perTurn, refused, anchor));
        // The turn's calls are done; what waits for a human is decided before the model is asked again (resumeOn
        // 'each': once one of them is, the others are owed and the model goes on, told that they are pending).
        if (waiting.length > 0 && eachDecision && decidedHere > 0) {
          for (const p of waiting) owed.set(p.proposalId, p);
        } else if (waiting.length > 0) {
          stoppedReason = 'waiting';
          waitedOn = [...waiting, ...owed.values()];
          break;
        }
      }
      // The loop ended (a stop, not a next step): what it holds is written, so a retry has the whole run.
      await journal.flush();
    } catch (err) {
      if (!(err instanceof RunJournalStoppedException)) throw err;
      stoppedReason = 'aborted';
      error = err.message;
      this.logger.warn(`run ${runId}: stopped: ${error}`);
    }
    metrics.durationMs = performance.now() - started;
    const snapshot = metrics.snapshot();
    this.metrics.add(snapshot);
    // A proposal whose decision was told as a message (resumeOn 'each') is not pending any more, whatever its call said.
    const decidedLate = journal.decidedLate();
    const still = (p: PendingApproval) => !toldLate.has(p.proposalId) && !decidedLate.has(p.proposalId);
    // Only a proposing skill's result puts a proposal in front of a human: a read (or any tool) naming one does not.
    const proposing = (name: string) => this.registry.get(name)?.action === 'propose';
    const pendingApprovals = (stoppedReason === 'waiting' ? uniqueProposals(waitedOn) : pendingOf(steps, proposing)).filter(still);
    // The answer says when work waits for a human, whatever the model wrote.
    if (pendingApprovals.length)
      answer = `${answer}${answer ? '\n\n' : ''}${pendingApprovals.map((p) => `Proposal ${p.proposalId} (${p.skill}) needs human approval${p.reason ? `: ${p.reason}` : ''}.`).join('\n')}`;
    const result: AgentRunResult = {
      runId,
      agent: this.name,
      answer,
      stoppedReason,
      steps,
      metrics: snapshot,
      pendingApprovals,
      ...(error ? { error } : {}),
      ...(budget ? { budget } : {}),
    };
    this.events?.emit({
      type: 'run',
      agent: this.name,
      status: stoppedReason,
      durationMs: metrics.durationMs,
      tenantId: ctx.tenantId ?? null,
    });
    emit?.({ type: 'final', result });
    return result;
  }

  /** The run's listener, made safe: what it throws (or rejects with) is logged once per run and never stops the run. */
  private emitter(runId: string, listener: ((event: AgentRunEvent) => void) | undefined): ((event: AgentRunEvent) => void) | undefined {
    if (typeof listener !== 'function') return undefined;
    let logged = false;
    const failed = (err: unknown) => {
      if (logged) return;
      logged = true;
      this.logger.warn(
        `run ${runId}: the run's event listener failed (the run goes on; further failures are not logged): ${this.shownError(err)}`,
      );
    };
    return (event) => {
      try {
        const returned = listener(event) as unknown;
        if (returned instanceof Promise) returned.catch(failed);
      } catch (err) {
        failed(err);
      }
    };
  }

  /** What was thrown, as a caller or a log may read it: redacted (every secret the redactor knows), on one line, bounded. */
  private shownError(err: unknown): string {
    return oneLine(this.redactor.redactText(safeText(err)), RUN_ERROR_MAX_CHARS);
  }

  /**
   * The one denial that answers every call of a turn past `maxToolCallsPerTurn` (docs/getting-started.md, "maxToolCallsPerTurn"): counted
   * once, audited once under the first refused call's name, with how many calls it stands for and which names they
   * used (the first few, bounded); its observation tells the model the same.
   */
  private turnCapSummary(ctx: SkillContext, turn: ModelTurn, perTurn: number, refused: number, anchor: ToolCall | undefined) {
    const names = new Set<string>();
    for (const call of turn.toolCalls.slice(perTurn)) {
      if (names.size >= SUMMARY_NAMES_MAX) break;
      names.add(boundedName(call.name));
    }
    const details = { refused, maxToolCallsPerTurn: perTurn };
    const name = anchor ? turn.toolCalls[perTurn].name : 'turn_cap';
    return this.dispatcher.deny(
      ctx,
      name,
      { ...details, names: [...names] },
      'denied_turn_cap',
      anchor ? { toolCallId: anchor.id } : undefined,
      details,
    );
  }

  /**
   * The arguments of a model's tool call as the journal keeps them: a digest for a skill whose audit keeps one, and the
   * fields a skill marks `x-sensitive` masked (no copy of a password outlives the call; a replay shows the model its
   * own earlier call with them masked).
   */
  private journaledArgs(name: string, args: unknown): unknown {
    const skill = this.registry.get(name);
    if (!skill) return args;
    if (skill.audit.args === 'digest') return auditDigest(args) ?? {};
    // Not counted in the redaction metrics: the dispatcher counts the fields it masks for the callers who read them.
    return this.redactor.maskSensitive(args, skill.parameters, { count: false });
  }

  /** A call's record as the journal keeps it: the arguments and the observation a skill's audit digests, as digests. */
  private journaledRecord(record: ToolCallRecord): ToolCallRecord {
    const kept = this.registry.get(record.name)?.audit;
    if (!kept || (kept.args !== 'digest' && kept.result !== 'digest')) return record;
    return {
      ...record,
      arguments: kept.args === 'digest' ? (auditDigest(record.arguments) ?? {}) : record.arguments,
      observation: kept.result === 'digest' ? JSON.stringify(auditDigest(record.observation) ?? null) : record.observation,
    };
  }

  /** The record of a call of a replayed turn whose arguments the journal did not keep whole (see JournaledTurn). */
  private argumentsNotKept(id: string, skill: string, args: unknown): ToolCallRecord {
    return {
      id,
      name: skill,
      arguments: this.redactor.redact(args ?? {}),
      decision: 'allowed',
      cause: null,
      outcome: 'error',
      ok: false,
      observation: JSON.stringify({ error: { code: 'arguments_not_kept', message: ARGUMENTS_NOT_KEPT_MESSAGE(skill) } }),
      durationMs: 0,
    };
  }

  /**
   * The record of a call that was in flight when an earlier attempt of the run stopped, to a skill that may not be
   * repeated: it may have had its effect or not, so it is not run again and the model is told so.
   */
  private outcomeUnknown(id: string, skill: string, args: unknown): ToolCallRecord {
    return {
      id,
      name: skill,
      arguments: this.redactor.redact(this.journaledArgs(skill, args ?? {})),
      decision: 'allowed',
      cause: null,
      outcome: 'error',
      ok: false,
      observation: JSON.stringify({ error: { code: 'outcome_unknown', message: OUTCOME_UNKNOWN_MESSAGE(skill) } }),
      durationMs: 0,
    };
  }

  getMetrics(): AgentMetricsSnapshot {
    return this.metrics.snapshot();
  }

  private async systemPrompt(tenantId: string | undefined, userId: string | undefined, goal: string): Promise<string> {
    const base = this.spec.systemPrompt ?? '';
    // Memory only with both a tenant and a user: no wildcard scope, ever.
    if (!this.spec.memory || !tenantId || !userId) return base;
    // Memory is context, not a gate: a recall that fails (its store is down) is logged and the run goes on without it.
    let block: string;
    try {
      block = await this.spec.memory.recallBlock({ tenantId, userId }, goal);
    } catch (err) {
      this.logger.warn(`agent ${this.name}: memory recall failed, the run goes on without memory: ${this.shownError(err)}`);
      return base;
    }
    return typeof block === 'string' && block ? `${base}\n\n${block}` : base;
  }

  /**
   * The tokens a turn is charged. A model server that reports no usage (a proxy, a server that ignores
   * `stream_options.include_usage`) or zero for a request that was not empty must not make the run budget and the
   * tenant quota blind: what it failed to report is estimated at 4 characters a token (request: system prompt,
   * messages and tool schemas; answer: text, refusal and tool-call arguments). Logged once per agent.
   */
  private chargeableUsage(turn: ModelTurn, system: string, messages: readonly ChatMessage[], tools: readonly ToolSpec[]): TokenUsage {
    const reported = turn.usage ?? { inputTokens: 0, outputTokens: 0 };
    const valid = (n: unknown): n is number => typeof n === 'number' && Number.isFinite(n) && n > 0;
    const answered = turn.text.length + (turn.refusal?.length ?? 0) + turn.toolCalls.length > 0;
    if (valid(reported.inputTokens) && (valid(reported.outputTokens) || !answered)) return reported;
    if (!this.estimatedUsage) {
      this.estimatedUsage = true;
      this.logger.warn(
        `the model (${this.spec.provider.name}) reported no token usage for a turn: charging an estimate (4 characters a token)`,
      );
    }
    const estimated = estimateUsage({ system, messages, tools }, turn);
    return {
      inputTokens: valid(reported.inputTokens) ? reported.inputTokens : estimated.inputTokens,
      outputTokens: valid(reported.outputTokens) ? reported.outputTokens : estimated.outputTokens,
    };
  }

  /** 'ok', the budget that ran out, or 'unavailable' when the quota store cannot be read. */
  private async quotaState(key: QuotaKey): Promise<'ok' | QuotaBudget | 'unavailable'> {
    try {
      const status = await this.quota.check(key);
      return status.allowed ? 'ok' : (status.exhausted ?? 'tenant');
    } catch (err) {
      this.logger.error(`token quota check failed, stopping the run (quota_unavailable): ${this.shownError(err)}`);
      return 'unavailable';
    }
  }
}

/** What is wrong with a provider's turn (text, refusal, tool calls of the ModelTurn shape), or undefined. */
function turnProblem(turn: unknown): string | undefined {
  if (typeof turn !== 'object' || turn === null) return 'it is not an object';
  const t = turn as { text?: unknown; refusal?: unknown; toolCalls?: unknown };
  if (typeof t.text !== 'string') return 'text is not a string';
  if (t.refusal !== undefined && typeof t.refusal !== 'string') return 'refusal is not a string';
  if (!Array.isArray(t.toolCalls)) return 'toolCalls is not an array';
  const omitted = (turn as { omittedToolCalls?: unknown }).omittedToolCalls;
  if (omitted !== undefined && !(Number.isSafeInteger(omitted) && (omitted as number) >= 0))
    return 'omittedToolCalls is not a whole number of 0 or more';
  for (const call of t.toolCalls as unknown[]) {
    const c = call as { id?: unknown; name?: unknown } | null;
    if (typeof c !== 'object' || c === null || typeof c.id !== 'string' || typeof c.name !== 'string')
      return 'a tool call without a string id and name';
  }
  return undefined;
}

/**
 * A model's tool call as the conversation carries it back to the model and the run shows it: a name that is no skill
 * bounded (boundedName: cut, control characters replaced), an id that is not 1 to 128 printable ASCII characters
 * replaced by one of ours (`zmodu_<turn>_<call>`). The dispatcher still resolves the name the model sent.
 */
function conversationCall(call: ToolCall, step: number, i: number): ToolCall {
  const id = TOOL_CALL_ID.test(call.id) ? call.id : `zmodu_${step + 1}_${i + 1}`;
  const name = boundedName(call.name);
  return id === call.id && name === call.name ? call : { ...call, id, name };
}

/** The secrets a provider says it sends (ModelProvider.secrets), or none when it says nothing or fails to. */
function providerSecrets(provider: ModelProvider): readonly unknown[] {
  try {
    const secrets = typeof provider?.secrets === 'function' ? provider.secrets() : [];
    return Array.isArray(secrets) ? secrets : [];
  } catch {
    return [];
  }
}

/** Tool calls whose value says a proposal waits for a human. */
function pendingOf(steps: AgentStep[], proposing: (skill: string) => boolean): PendingApproval[] {
  const out: PendingApproval[] = [];
  for (const step of steps)
    for (const call of step.toolCalls) {
      const pending = proposing(call.name) ? pendingOfCall(call) : null;
      if (pending) out.push(pending);
    }
  return out;
}

/** Each proposal once, in order. */
function uniqueProposals(list: readonly PendingApproval[]): PendingApproval[] {
  const seen = new Set<string>();
  return list.filter((p) => !seen.has(p.proposalId) && seen.add(p.proposalId) !== undefined);
}

/** A proposal id as the pipeline makes them (a UUID): anything else in a tool result is no proposal of ours. */
const PROPOSAL_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The proposal a tool call put in front of a human (its value's verdict is needs_human or execute_not_permitted), or null. */
function pendingOfCall(call: ToolCallRecord): PendingApproval | null {
  if (!call.ok || !call.observation.includes('"proposalId"')) return null;
  const v = JSON.parse(call.observation) as { verdict?: string; proposalId?: string; reason?: string | null };
  if (
    (v.verdict === 'needs_human' || v.verdict === 'execute_not_permitted') &&
    typeof v.proposalId === 'string' &&
    PROPOSAL_ID.test(v.proposalId)
  )
    return { proposalId: v.proposalId, verdict: v.verdict, skill: call.name, reason: v.reason ?? null };
  return null;
}

/** A dispatcher's result as the run records it: the name and arguments as the dispatcher shows them (bounded, redacted). */
function toRecord(id: string, result: SkillCallResult): ToolCallRecord {
  return {
    id,
    name: result.skill,
    arguments: result.arguments ?? {},
    decision: result.decision,
    cause: result.cause,
    outcome: result.outcome,
    ok: result.ok,
    observation: result.observation,
    durationMs: result.durationMs,
  };
}
