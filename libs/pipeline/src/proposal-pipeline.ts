import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown, Optional } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import { Guard, ownValue } from '@zmodu/guard';
import { DataSource, EntityManager } from 'typeorm';
import { ApprovalForbiddenException, InvalidProposalException, ProposalConflictException, ProposalNotFoundException } from './exceptions/proposal.exceptions';
import { PIPELINE_MODULE_OPTIONS } from './pipeline.module-definition';
import { DEFAULT_EXPIRY_MS, DEFAULT_STEPS, PipelineModuleOptions } from './pipeline.options';
import { ApprovalStep, DecisionRecord, PipelineOutcome, ProposalContext, ProposalInput, ProposalRecord, ProposalStatus, ProposalVerdict } from './proposal.types';
import { reviewByRules, RiskVerdict } from './risk-review';

/** The caller of a human decision. */
export interface Approver {
  readonly tenantId: string;
  readonly userId: string;
  readonly permissions: readonly string[];
}

export interface ProposalPage {
  readonly items: ProposalRecord[];
  readonly total: number;
  readonly page: number;
  readonly limit: number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const STATUSES: readonly ProposalStatus[] = ['refused', 'rejected', 'pending', 'approved', 'executed', 'failed', 'expired'];
const COLUMNS = 'id, tenant_id, action, payload, amount, proposer, status, verdict, reason, steps, approvals, run_id, created_at, expires_at, executed_at, result';
const P_COLUMNS = COLUMNS.split(', ')
  .map((c) => `p.${c}`)
  .join(', ');
const DECISIONS_JSON = `coalesce((SELECT json_agg(json_build_object('step', d.step, 'decided_by', d.decided_by, 'decision', d.decision, 'reason', d.reason, 'at', d.at) ORDER BY d.step)
  FROM zmodu_approval_decisions d WHERE d.proposal_id = p.id), '[]')`;
const MAX_PAYLOAD_BYTES = 64 * 1024;
const ALREADY_DECIDED = 'Separation of duties: you already decided a step of this proposal; another person must decide the next.';

/**
 * Staged execution (spec §3): propose check, risk review, approval flow, execute check, executor.
 * Proposals live in PostgreSQL: a pending one survives a restart, and an approved one is executed
 * exactly once, in the transaction that marks it executed (claimed with FOR UPDATE SKIP LOCKED),
 * even when approvers race or the process dies between approval and execution.
 */
@Injectable()
export class ProposalPipeline implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('ProposalPipeline');
  private readonly options: PipelineModuleOptions;
  readonly guard: Guard;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    @Inject(PIPELINE_MODULE_OPTIONS) raw: PipelineModuleOptions,
    @Optional() @Inject(getDataSourceToken()) private readonly dataSource?: DataSource,
  ) {
    this.options = Object.assign(new PipelineModuleOptions(), raw);
    const executors = this.options.executors;
    if (!executors || typeof executors !== 'object') throw new Error('PipelineModule: executors must be { [action]: (proposal, ctx) => result }.');
    for (const [action, fn] of Object.entries(executors))
      if (typeof fn !== 'function') throw new Error(`PipelineModule: the executor of '${action}' must be a function.`);
    // approval.request needs no application code to be approved: by default its execution records the approval.
    if (this.options.registerSkills !== false && !ownValue(executors, 'approval.request'))
      this.options.executors = { ...executors, 'approval.request': (p) => ({ approved: true, subject: (p.payload as { subject?: unknown })?.subject ?? null }) };
    this.guard = new Guard(this.options.policy ?? { allow: Object.keys(this.options.executors), allowExecute: true });
    if (!this.dataSource) throw new Error('PipelineModule needs a TypeORM DataSource (with ZMODU_PIPELINE_ENTITIES and ZMODU_PIPELINE_MIGRATIONS).');
  }

  private get db(): DataSource {
    return this.dataSource as DataSource;
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.recover().catch((err) => this.logger.error(`recovery of approved proposals failed: ${String(err)}`));
    const every = this.options.recoveryIntervalMs ?? 30_000;
    if (every > 0) {
      this.timer = setInterval(() => void this.recover().catch((err) => this.logger.error(`recovery failed: ${String(err)}`)), every);
      this.timer.unref();
    }
  }

  onApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  // ---------------------------------------------------------------- submit

  async submit(ctx: ProposalContext, input: ProposalInput): Promise<PipelineOutcome> {
    checkContext(ctx);
    const { action, payload, amount } = checkInput(input);
    const id = randomUUID();
    // 1. Propose check.
    const propose = this.guard.check('propose', action);
    if (!propose.allowed || !ownValue(this.options.executors, action)) {
      const reason = propose.allowed ? `no executor is registered for '${action}'` : propose.cause;
      await this.insert({ id, ctx, action, payload, amount, status: 'refused', verdict: 'propose_refused', reason, steps: [] });
      return { verdict: 'propose_refused', proposalId: id, status: 'refused', reason };
    }
    // 2. Risk review: the rules (but velocity), then the custom reviewers, outside any transaction.
    let risk: RiskVerdict = reviewByRules({ ...this.options.risk, velocity: undefined }, input, ctx, 0);
    for (const reviewer of this.options.reviewers ?? []) {
      if (risk.verdict !== 'approve') break;
      risk = await reviewer.review({ action, payload, amount }, ctx);
    }
    // Velocity, counted and written under one lock, so that racing submits cannot both pass.
    const velocity = this.options.risk?.velocity;
    const place = async (m: EntityManager) => {
      if (velocity && risk.verdict !== 'reject') {
        const key = JSON.stringify(velocity.per === 'user' ? [ctx.tenantId, ctx.userId] : [ctx.tenantId]);
        await m.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`zmodu:velocity:${key}`]);
        const since = new Date(Date.now() - velocity.windowMs);
        const [{ n }] = await m.query(
          `SELECT count(*) AS n FROM zmodu_proposals WHERE tenant_id = $1 AND ($2::text IS NULL OR proposer = $2) AND created_at > $3`,
          [ctx.tenantId, velocity.per === 'user' ? ctx.userId : null, since],
        );
        const v = reviewByRules({ velocity }, input, ctx, Number(n));
        if (v.verdict === 'reject') risk = v;
      }
      if (risk.verdict === 'reject') {
        await this.insert({ id, ctx, action, payload, amount, status: 'rejected', verdict: 'risk_rejected', reason: risk.reason, steps: [] }, m);
        return { verdict: 'risk_rejected' as const, status: 'rejected' as const, reason: risk.reason, steps: [] };
      }
      // 3. Approval flow for escalations.
      if (risk.verdict === 'escalate') {
        const steps = this.stepsFor(action, amount);
        await this.insert({ id, ctx, action, payload, amount, status: 'pending', verdict: 'needs_human', reason: risk.reason, steps }, m);
        return { verdict: 'needs_human' as const, status: 'pending' as const, reason: risk.reason, steps };
      }
      // 4. Execute check: refused here goes to the human queue.
      const exec = this.guard.check('execute', action);
      if (!exec.allowed) {
        const steps = [...(this.options.approval?.defaultSteps ?? DEFAULT_STEPS)];
        await this.insert({ id, ctx, action, payload, amount, status: 'pending', verdict: 'execute_not_permitted', reason: exec.cause, steps }, m);
        return { verdict: 'execute_not_permitted' as const, status: 'pending' as const, reason: exec.cause as string, steps };
      }
      // 5. Executor, in the transaction that records the proposal as executed: both commit, or neither.
      const record: ProposalRecord = {
        id,
        tenantId: ctx.tenantId,
        action,
        payload,
        amount: amount ?? null,
        proposer: ctx.userId,
        status: 'approved',
        verdict: 'executed',
        reason: null,
        steps: [],
        approvals: 0,
        createdAt: new Date(),
        expiresAt: null,
        executedAt: null,
        result: null,
        runId: ctx.runId ?? null,
        decisions: [],
      };
      let result: unknown;
      try {
        result = await ownValue(this.options.executors, action)!(record, { manager: m, idempotencyKey: id });
      } catch (err) {
        throw new ExecutorFailure(err);
      }
      await this.insert({ id, ctx, action, payload, amount, status: 'executed', verdict: 'executed', reason: null, steps: [], result: result ?? null }, m);
      return { verdict: 'executed' as const, status: 'executed' as const, reason: null, steps: [], result: result ?? null };
    };
    // Counting for velocity, or executing, takes a transaction; a lone INSERT does not.
    const autoExecute = risk.verdict === 'approve' && this.guard.evaluate('execute', action).allowed;
    let placed: Awaited<ReturnType<typeof place>>;
    try {
      placed = velocity || autoExecute ? await this.db.transaction(place) : await place(this.db.manager);
    } catch (err) {
      if (!(err instanceof ExecutorFailure)) throw err;
      const reason = err.cause instanceof Error ? err.cause.message : String(err.cause);
      this.logger.warn(`executor of proposal ${id} failed: ${reason}`);
      await this.insert({ id, ctx, action, payload, amount, status: 'failed', verdict: 'executor_failed', reason: reason.slice(0, 1000), steps: [] });
      return { verdict: 'executor_failed', proposalId: id, status: 'failed', reason };
    }
    return {
      verdict: placed.verdict,
      proposalId: id,
      status: placed.status,
      reason: placed.reason,
      ...('result' in placed ? { result: placed.result } : {}),
      ...(placed.steps.length ? { waitingFor: placed.steps } : {}),
    };
  }

  // ---------------------------------------------------------------- human decisions

  async decide(caller: Approver, id: string, decision: 'approve' | 'reject', reason: string): Promise<PipelineOutcome> {
    checkApprover(caller);
    if (typeof id !== 'string' || !UUID.test(id)) throw new InvalidProposalException('id', 'id must be a UUID');
    if (decision !== 'approve' && decision !== 'reject') throw new InvalidProposalException('decision', "decision must be 'approve' or 'reject'");
    if (typeof reason !== 'string' || reason.trim() === '' || reason.length > 1000)
      throw new InvalidProposalException('reason', 'reason must be a non-empty string of at most 1000 characters');
    const step = await this.decideStep(caller, id, decision, reason);
    switch (step.kind) {
      case 'missing':
        throw new ProposalNotFoundException(id);
      case 'expired':
        throw new ProposalConflictException('expired', `Proposal ${id} has expired.`);
      case 'conflict':
        throw new ProposalConflictException(step.status, `Proposal ${id} is already ${step.status}.`);
      case 'forbidden':
        throw new ApprovalForbiddenException(step.message);
      case 'rejected':
        return { ...this.outcomeOf(await this.load(id)), verdict: 'rejected_by_human' };
      case 'next': {
        const p = await this.load(id);
        return { ...this.outcomeOf(p), verdict: 'approved_pending_next_step' };
      }
      case 'approved':
        return (await this.execute(id)) ?? this.outcomeOf(await this.load(id));
    }
  }

  /**
   * Read, check, then write the decision and the proposal's new state in one conditional statement
   * (atomic in the database: it only applies while the proposal is still pending at the step that
   * was read). Lost a race: read again, and the checks say why.
   */
  private async decideStep(caller: Approver, id: string, decision: 'approve' | 'reject', reason: string) {
    // The common case in one statement: every check holds, so the decision and the new state are written at once.
    const fast = await this.decideAtOnce(caller, id, decision, reason);
    if (fast) return fast;
    // Otherwise read, and the checks say why (or the proposal moved on meanwhile: try again).
    for (let attempt = 0; attempt < 5; attempt++) {
      const rows = await this.db.query(
        `SELECT ${P_COLUMNS}, EXISTS (SELECT 1 FROM zmodu_approval_decisions d WHERE d.proposal_id = p.id AND d.decided_by = $3) AS mine
         FROM zmodu_proposals p WHERE p.id = $1 AND p.tenant_id = $2`,
        [id, caller.tenantId, caller.userId],
      );
      if (rows.length === 0) return { kind: 'missing' as const };
      const p = toRecord(rows[0], []);
      if (p.status === 'pending' && p.expiresAt && p.expiresAt.getTime() <= Date.now()) {
        await this.db.query(`UPDATE zmodu_proposals SET status = 'expired' WHERE id = $1 AND status = 'pending'`, [id]);
        return { kind: 'expired' as const };
      }
      if (p.status !== 'pending') return { kind: 'conflict' as const, status: p.status };
      if (p.proposer === caller.userId) return { kind: 'forbidden' as const, message: 'Separation of duties: the proposer cannot decide on their own proposal.' };
      if (rows[0].mine === true) return { kind: 'forbidden' as const, message: ALREADY_DECIDED };
      const current = p.steps[p.approvals] ?? DEFAULT_STEPS[0];
      if (!caller.permissions.includes(current.permission))
        return { kind: 'forbidden' as const, message: `Step ${p.approvals + 1} (${current.name}) needs the permission ${current.permission}.` };
      const approvals = decision === 'approve' ? p.approvals + 1 : p.approvals;
      const done = decision === 'approve' && approvals >= Math.max(1, p.steps.length);
      const status = decision === 'reject' ? 'rejected' : done ? 'approved' : 'pending';
      let written: unknown[];
      try {
        written = await this.db.query(
          `WITH claimed AS (
             UPDATE zmodu_proposals SET approvals = $6, status = $7, reason = coalesce($8, reason)
             WHERE id = $1 AND status = 'pending' AND approvals = $2 AND (expires_at IS NULL OR expires_at > now())
             RETURNING id
           )
           INSERT INTO zmodu_approval_decisions (proposal_id, step, decided_by, decision, reason, at)
           SELECT id, $2, $3, $4, $5, now() FROM claimed
           RETURNING id`,
          [id, p.approvals, caller.userId, decision, reason, approvals, status, decision === 'reject' ? `rejected by ${caller.userId}: ${reason}` : null],
        );
      } catch (err) {
        // One person racing themselves across two steps: the (proposal, person) key refuses the second.
        if (sqlState(err) === '23505') return { kind: 'forbidden' as const, message: ALREADY_DECIDED };
        throw err;
      }
      if (written.length === 1) return { kind: decision === 'reject' ? ('rejected' as const) : done ? ('approved' as const) : ('next' as const) };
    }
    return { kind: 'conflict' as const, status: 'pending' as ProposalStatus };
  }

  /** One conditional statement: applies only if the caller may decide the current step now; null when it did not apply. */
  private async decideAtOnce(caller: Approver, id: string, decision: 'approve' | 'reject', reason: string) {
    let rows: Row[];
    try {
      rows = await this.prepared(
        null,
        'decide',
        `WITH claimed AS (
           UPDATE zmodu_proposals p SET
             approvals = CASE WHEN $4 = 'approve' THEN p.approvals + 1 ELSE p.approvals END,
             status = CASE WHEN $4 = 'reject' THEN 'rejected'
                           WHEN p.approvals + 1 >= greatest(1, jsonb_array_length(p.steps)) THEN 'approved'
                           ELSE 'pending' END,
             reason = CASE WHEN $4 = 'reject' THEN $6 ELSE p.reason END
           WHERE p.id = $1 AND p.tenant_id = $2 AND p.status = 'pending'
             AND (p.expires_at IS NULL OR p.expires_at > now())
             AND p.proposer <> $3
             AND coalesce(p.steps -> p.approvals ->> 'permission', $7) = ANY ($8::text[])
             AND NOT EXISTS (SELECT 1 FROM zmodu_approval_decisions d WHERE d.proposal_id = p.id AND d.decided_by = $3)
           RETURNING p.id, p.status, p.approvals - CASE WHEN $4 = 'approve' THEN 1 ELSE 0 END AS step
         )
         INSERT INTO zmodu_approval_decisions (proposal_id, step, decided_by, decision, reason, at)
         SELECT id, step, $3, $4, $5, now() FROM claimed
         RETURNING (SELECT status FROM claimed) AS status`,
        [id, caller.tenantId, caller.userId, decision, reason, `rejected by ${caller.userId}: ${reason}`, DEFAULT_STEPS[0].permission, [...caller.permissions]],
      );
    } catch (err) {
      if (sqlState(err) === '23505') return { kind: 'forbidden' as const, message: ALREADY_DECIDED };
      throw err;
    }
    if (rows.length !== 1) return null;
    const status = rows[0].status;
    return { kind: status === 'rejected' ? ('rejected' as const) : status === 'approved' ? ('approved' as const) : ('next' as const) };
  }

  // ---------------------------------------------------------------- execution, exactly once

  /** Execute an approved proposal if nobody else has it; null when it is not (or no longer) approved. */
  async execute(id: string): Promise<PipelineOutcome | null> {
    let failure: unknown;
    let threw = false;
    const done = await this.db
      .transaction(async (m) => {
        const rows = await this.prepared(
          m,
          'claim',
          `SELECT ${P_COLUMNS}, ${DECISIONS_JSON} AS decisions FROM zmodu_proposals p WHERE p.id = $1 AND p.status = 'approved' FOR UPDATE OF p SKIP LOCKED`,
          [id],
        );
        if (rows.length === 0) return null;
        const p = toRecord(rows[0], decisionsFrom(rows[0].decisions));
        const executor = ownValue(this.options.executors, p.action);
        if (!executor) throw new Error(`no executor is registered for '${p.action}'`);
        let result: unknown;
        try {
          result = await executor(p, { manager: m, idempotencyKey: p.id });
        } catch (err) {
          threw = true;
          throw err;
        }
        await this.prepared(m, 'executed', `UPDATE zmodu_proposals SET status = 'executed', verdict = 'executed', executed_at = now(), result = $2 WHERE id = $1`, [
          id,
          JSON.stringify(result ?? null),
        ]);
        return { ...p, status: 'executed' as const, verdict: 'executed' as const, result: result ?? null };
      })
      .catch((err: unknown) => {
        // Only the executor's own failure settles the proposal as failed; a database error leaves it
        // approved, for the next recovery pass.
        if (!threw) throw err;
        failure = err;
        return null;
      });
    if (done) return this.outcomeOf(done);
    if (failure === undefined) return null;
    const reason = failure instanceof Error ? failure.message : String(failure);
    this.logger.warn(`executor of proposal ${id} failed: ${reason}`);
    await this.db.query(`UPDATE zmodu_proposals SET status = 'failed', verdict = 'executor_failed', reason = $2 WHERE id = $1 AND status = 'approved'`, [
      id,
      reason.slice(0, 1000),
    ]);
    return { verdict: 'executor_failed', proposalId: id, status: 'failed', reason };
  }

  /** Execute every approved proposal left behind (a process that died after the approval). Returns how many ran. */
  async recover(): Promise<number> {
    const rows: Array<{ id: string }> = await this.db.query(`SELECT id FROM zmodu_proposals WHERE status = 'approved' ORDER BY created_at LIMIT 100`);
    let n = 0;
    for (const { id } of rows) if ((await this.execute(id))?.verdict === 'executed') n++;
    return n;
  }

  // ---------------------------------------------------------------- reads

  /** One proposal of the tenant, with its decisions. Another tenant's is not found. */
  async get(tenantId: string, id: string): Promise<ProposalRecord> {
    if (typeof id !== 'string' || !UUID.test(id)) throw new InvalidProposalException('id', 'id must be a UUID');
    await this.expire(tenantId);
    const rows = await this.db.query(`SELECT ${COLUMNS} FROM zmodu_proposals WHERE id = $1 AND tenant_id = $2`, [id, tenantId]);
    if (rows.length === 0) throw new ProposalNotFoundException(id);
    return toRecord(rows[0], await this.decisions(this.db.manager, id));
  }

  async list(tenantId: string, query: { status?: string; page?: number; limit?: number } = {}): Promise<ProposalPage> {
    const page = query.page ?? 1;
    const limit = query.limit ?? 20;
    if (!Number.isInteger(page) || page < 1) throw new InvalidProposalException('page', 'page must be a whole number from 1');
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new InvalidProposalException('limit', 'limit must be a whole number from 1 to 100');
    if (query.status !== undefined && !STATUSES.includes(query.status as ProposalStatus))
      throw new InvalidProposalException('status', `status must be one of ${STATUSES.join(', ')}`);
    await this.expire(tenantId);
    const where = `tenant_id = $1 AND ($2::text IS NULL OR status = $2)`;
    const params = [tenantId, query.status ?? null];
    const [{ n }] = await this.db.query(`SELECT count(*) AS n FROM zmodu_proposals WHERE ${where}`, params);
    const rows = await this.db.query(`SELECT ${COLUMNS} FROM zmodu_proposals WHERE ${where} ORDER BY created_at DESC, id LIMIT $3 OFFSET $4`, [
      ...params,
      limit,
      (page - 1) * limit,
    ]);
    return { items: rows.map((r: Row) => toRecord(r, [])), total: Number(n), page, limit };
  }

  // ---------------------------------------------------------------- helpers

  /**
   * One of the pipeline's own statements, as a named prepared statement on the connection (in `m`'s
   * transaction when given): planning costs these statements more than running them.
   */
  private async prepared(m: EntityManager | null, name: string, text: string, values: unknown[]): Promise<Row[]> {
    const runner = m?.queryRunner ?? this.db.createQueryRunner();
    const own = !m?.queryRunner;
    try {
      const conn = (await runner.connect()) as { query(q: { name: string; text: string; values: unknown[] }): Promise<{ rows: Row[] }> };
      return (await conn.query({ name: `zmodu_pipeline_${name}`, text, values })).rows;
    } finally {
      if (own) await runner.release();
    }
  }

  private stepsFor(action: string, amount: number | undefined): ApprovalStep[] {
    const rules = ownValue(this.options.approval?.chains, action) ?? [];
    const steps: ApprovalStep[] = [];
    for (const rule of [...rules].sort((a, b) => a.minAmount - b.minAmount))
      if ((amount ?? 0) >= rule.minAmount) steps.push(...rule.steps);
    return steps.length ? steps : [...(this.options.approval?.defaultSteps ?? DEFAULT_STEPS)];
  }

  private async insert(
    p: {
      id: string;
      ctx: ProposalContext;
      action: string;
      payload: unknown;
      amount?: number;
      status: ProposalStatus;
      verdict: ProposalVerdict;
      reason: string | null;
      steps: ApprovalStep[];
      result?: unknown;
    },
    m: EntityManager = this.db.manager,
  ): Promise<void> {
    const expires = p.status === 'pending' ? new Date(Date.now() + (this.options.approval?.expiresInMs ?? DEFAULT_EXPIRY_MS)) : null;
    const executed = p.status === 'executed';
    await this.prepared(
      m,
      'insert',
      `INSERT INTO zmodu_proposals (id, tenant_id, action, payload, amount, proposer, status, verdict, reason, steps, run_id, created_at, expires_at, executed_at, result)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, now(), $12, CASE WHEN $13::boolean THEN now() END, $14)`,
      [
        p.id, p.ctx.tenantId, p.action, JSON.stringify(p.payload ?? null), p.amount ?? null, p.ctx.userId, p.status, p.verdict, p.reason,
        JSON.stringify(p.steps), p.ctx.runId ?? null, expires, executed, executed ? JSON.stringify(p.result ?? null) : null,
      ],
    );
  }

  private async load(id: string): Promise<ProposalRecord> {
    const rows = await this.db.query(`SELECT ${COLUMNS} FROM zmodu_proposals WHERE id = $1`, [id]);
    return toRecord(rows[0], []);
  }

  private async decisions(m: EntityManager, id: string): Promise<DecisionRecord[]> {
    const rows = await m.query(`SELECT step, decided_by, decision, reason, at FROM zmodu_approval_decisions WHERE proposal_id = $1 ORDER BY step`, [id]);
    return decisionsFrom(rows);
  }

  private async expire(tenantId: string): Promise<void> {
    await this.db.query(`UPDATE zmodu_proposals SET status = 'expired' WHERE tenant_id = $1 AND status = 'pending' AND expires_at <= now()`, [tenantId]);
  }

  private outcomeOf(p: ProposalRecord): PipelineOutcome {
    const waiting = p.status === 'pending' ? p.steps.slice(p.approvals) : [];
    return {
      verdict: p.verdict,
      proposalId: p.id,
      status: p.status,
      reason: p.reason,
      ...(p.status === 'executed' ? { result: p.result } : {}),
      ...(waiting.length ? { waitingFor: waiting } : {}),
    };
  }
}

type Row = Record<string, unknown>;

/** SQLSTATE of a database error, raw or wrapped by TypeORM. */
function sqlState(err: unknown): string | undefined {
  const e = err as { code?: string; driverError?: { code?: string } };
  return e?.driverError?.code ?? e?.code;
}

/** Carries an executor's own failure out of the transaction it rolled back. */
class ExecutorFailure extends Error {
  constructor(override readonly cause: unknown) {
    super('executor failed');
  }
}

function decisionsFrom(value: unknown): DecisionRecord[] {
  const rows = (typeof value === 'string' ? JSON.parse(value) : value) as Row[];
  return (rows ?? []).map((r) => ({
    step: Number(r.step),
    decidedBy: String(r.decided_by),
    decision: r.decision as 'approve' | 'reject',
    reason: String(r.reason),
    at: new Date(r.at as string),
  }));
}

function toRecord(r: Row, decisions: DecisionRecord[]): ProposalRecord {
  const json = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v);
  return {
    id: String(r.id),
    tenantId: String(r.tenant_id),
    action: String(r.action),
    payload: json(r.payload),
    amount: r.amount === null || r.amount === undefined ? null : Number(r.amount),
    proposer: String(r.proposer),
    status: r.status as ProposalStatus,
    verdict: r.verdict as ProposalVerdict,
    reason: (r.reason as string | null) ?? null,
    steps: (json(r.steps) as ApprovalStep[]) ?? [],
    approvals: Number(r.approvals),
    createdAt: new Date(r.created_at as string),
    expiresAt: r.expires_at ? new Date(r.expires_at as string) : null,
    executedAt: r.executed_at ? new Date(r.executed_at as string) : null,
    result: json(r.result) ?? null,
    runId: (r.run_id as string | null) ?? null,
    decisions,
  };
}

function checkContext(ctx: ProposalContext): void {
  if (!ctx || typeof ctx.tenantId !== 'string' || ctx.tenantId === '') throw new InvalidProposalException('tenantId', 'a proposal needs the tenant of its proposer');
  if (typeof ctx.userId !== 'string' || ctx.userId === '') throw new InvalidProposalException('userId', 'a proposal needs its proposer (user id)');
}

function checkApprover(c: Approver): void {
  if (!c || typeof c.tenantId !== 'string' || c.tenantId === '' || typeof c.userId !== 'string' || c.userId === '' || !Array.isArray(c.permissions))
    throw new InvalidProposalException('caller', 'a decision needs the tenant, user and permissions of the approver');
}

function checkInput(input: ProposalInput): { action: string; payload: unknown; amount?: number } {
  if (!input || typeof input.action !== 'string' || input.action === '' || input.action.length > 200)
    throw new InvalidProposalException('action', 'action must be a non-empty string (the action to execute, e.g. order.submit)');
  if (input.amount !== undefined && !(typeof input.amount === 'number' && Number.isFinite(input.amount) && input.amount >= 0))
    throw new InvalidProposalException('amount', 'amount must be a finite number >= 0');
  let text: string | undefined;
  try {
    text = JSON.stringify(input.payload ?? null);
  } catch {
    text = undefined;
  }
  if (text === undefined || Buffer.byteLength(text) > MAX_PAYLOAD_BYTES)
    throw new InvalidProposalException('payload', `payload must be JSON of at most ${MAX_PAYLOAD_BYTES} bytes`);
  return { action: input.action, payload: input.payload ?? null, amount: input.amount };
}
