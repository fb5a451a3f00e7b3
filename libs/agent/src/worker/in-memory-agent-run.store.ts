import { isScopeId } from '@zmodu/core';
import { LEASE_EXPIRED_MESSAGE, OUT_OF_ATTEMPTS_MESSAGE } from '../agent.messages';
import {
  AgentRunClock,
  AgentRunDecision,
  AgentRunLease,
  AgentRunWait,
  JournalPage,
  SettleOptions,
  AgentRunLimits,
  AgentRunMailbox,
  AgentRunOutcome,
  AgentRunRecord,
  AgentRunStore,
  MAX_RUN_ATTEMPTS,
  NewAgentRun,
  RecoverableRuns,
  RefusedRun,
} from './worker.ports';
import { admitRuns } from './admit-runs';
import { RunJournalConflictException } from '../exceptions/run-journal-conflict.exception';
import { journalPage, RunJournalEntry } from '../journal/run-journal';
import { canonicalJson } from '@zmodu/core';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

const isWaiting = (run: AgentRunRecord) => run.status === 'queued' || run.status === 'interrupted';

/**
 * Run records in this process's memory (tests, single-instance development): they do not survive a restart.
 * Every method runs to completion without awaiting, so each change is atomic within the process.
 */
export class InMemoryAgentRunStore implements AgentRunStore {
  private readonly runs = new Map<string, Mutable<AgentRunRecord>>();
  /** When each run was last claimed (the mailbox's drain). */
  private readonly claimedAt = new Map<string, number>();
  /** The store's clock of contacts (see AgentRunClock): the last one, and the last outage seen. */
  private lastContact: number | null = null;
  private outage: { from: number; to: number } | null = null;
  /** Each run's journal, in place order (see AgentRunStore.appendJournal), as JSON text: never shared with a caller. */
  private readonly journals = new Map<string, string[]>();

  async insert(runs: readonly NewAgentRun[], limits: AgentRunLimits = {}): Promise<{ refused: RefusedRun[] }> {
    const ids = new Set<string>();
    for (const r of runs) {
      if (this.runs.has(r.id) || ids.has(r.id)) throw new Error(`A run with id '${r.id}' is already stored.`);
      ids.add(r.id);
    }
    const waiting = new Map<string, number>();
    let total = 0;
    for (const run of this.runs.values())
      if (isWaiting(run)) {
        waiting.set(run.tenantId, (waiting.get(run.tenantId) ?? 0) + 1);
        total++;
      }
    const { accepted, refused } = admitRuns(runs, limits, waiting, total);
    for (const r of accepted) {
      this.runs.set(r.id, {
        id: r.id,
        tenantId: r.tenantId,
        userId: r.userId,
        permissions: [...r.permissions],
        agent: r.agent,
        goal: r.goal,
        ...(r.jobId !== undefined ? { jobId: r.jobId, jobTick: r.jobTick } : {}),
        status: 'queued',
        attempts: 0,
        maxAttempts: r.maxAttempts,
        answer: null,
        stoppedReason: null,
        steps: [],
        pendingApprovals: [],
        error: null,
        leaseOwner: null,
        leaseUntil: null,
        createdAt: new Date(),
        startedAt: null,
        finishedAt: null,
        waitingFor: [],
        waitUntil: null,
        decisions: [],
      });
    }
    return { refused };
  }

  async get(tenantId: string, runId: string): Promise<AgentRunRecord | null> {
    const run = this.runs.get(runId);
    return run && isScopeId(tenantId) && run.tenantId === tenantId ? copy(run) : null;
  }

  async claim(runId: string, owner: string, leaseMs: number): Promise<AgentRunRecord | null> {
    const run = this.runs.get(runId);
    if (!run || !isWaiting(run)) return null;
    this.claimedAt.set(runId, Date.now());
    if (run.attempts >= run.maxAttempts) {
      Object.assign(run, {
        status: 'failed',
        error: OUT_OF_ATTEMPTS_MESSAGE + (run.error ? ` Last: ${run.error}` : ''),
        finishedAt: new Date(),
      });
      return copy(run);
    }
    const now = Date.now();
    Object.assign(run, {
      status: 'running',
      leaseOwner: owner,
      leaseUntil: new Date(now + leaseMs),
      attempts: run.attempts + 1,
      startedAt: run.startedAt ?? new Date(now),
    });
    return copy(run);
  }

  async heartbeat(leases: readonly AgentRunLease[], leaseMs: number, clock: AgentRunClock): Promise<string[]> {
    this.contact(clock);
    const lost: string[] = [];
    for (const lease of leases) {
      const run = this.held(lease);
      if (run) run.leaseUntil = new Date(Date.now() + leaseMs);
      else lost.push(lease.runId);
    }
    return lost;
  }

  async finish(lease: AgentRunLease, o: AgentRunOutcome): Promise<boolean> {
    const run = this.held(lease);
    if (!run) return false;
    Object.assign(run, o, {
      steps: clone(o.steps),
      pendingApprovals: clone(o.pendingApprovals),
      leaseOwner: null,
      leaseUntil: null,
      finishedAt: new Date(),
    });
    return true;
  }

  async suspend(lease: AgentRunLease, wait: AgentRunWait): Promise<boolean | 'full'> {
    const run = this.held(lease);
    if (!run) return false;
    if (wait.maxPerTenant !== undefined) {
      let waiting = 0;
      for (const r of this.runs.values()) if (r.tenantId === run.tenantId && r.status === 'waiting') waiting++;
      if (waiting >= wait.maxPerTenant) return 'full';
    }
    Object.assign(run, {
      status: 'waiting',
      leaseOwner: null,
      leaseUntil: null,
      answer: wait.answer,
      stoppedReason: 'waiting',
      steps: clone(wait.steps),
      pendingApprovals: clone(wait.pendingApprovals),
      waitingFor: [...new Set(wait.proposalIds)],
      waitUntil: new Date(Date.now() + wait.waitMs),
      decisions: [],
    });
    return true;
  }

  async settle(
    tenantId: string,
    runId: string,
    decisions: readonly AgentRunDecision[],
    options?: SettleOptions,
  ): Promise<{ resumed: boolean }> {
    const run = this.runs.get(runId);
    if (!run || !isScopeId(tenantId) || run.tenantId !== tenantId || run.status !== 'waiting') return { resumed: false };
    const waitingFor = run.waitingFor ?? [];
    const known = new Map((run.decisions ?? []).map((d) => [d.proposalId, d]));
    for (const d of decisions) if (waitingFor.includes(d.proposalId) && !known.has(d.proposalId)) known.set(d.proposalId, { ...d });
    run.decisions = [...known.values()];
    if (options?.any === true ? known.size === 0 : !waitingFor.every((id) => known.has(id))) return { resumed: false };
    Object.assign(run, { status: 'queued', waitUntil: null, maxAttempts: Math.min(run.maxAttempts + 1, MAX_RUN_ATTEMPTS) });
    return { resumed: true };
  }

  async waiting(limit: number, afterId?: string): Promise<AgentRunRecord[]> {
    const runs = [...this.runs.values()].filter((r) => r.status === 'waiting');
    const page =
      typeof afterId === 'string'
        ? runs.filter((r) => r.id > afterId).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
        : runs.sort((a, b) => (a.waitUntil?.getTime() ?? 0) - (b.waitUntil?.getTime() ?? 0) || (a.id < b.id ? -1 : 1));
    return page.slice(0, Math.max(0, Math.floor(limit))).map(copy);
  }

  async release(lease: AgentRunLease, reason: string): Promise<boolean> {
    const run = this.held(lease);
    if (!run) return false;
    Object.assign(run, {
      status: 'interrupted',
      leaseOwner: null,
      leaseUntil: null,
      error: reason,
      maxAttempts: Math.min(run.maxAttempts + 1, MAX_RUN_ATTEMPTS),
    });
    return true;
  }

  async recoverable(limit: number, clock: AgentRunClock): Promise<RecoverableRuns> {
    const now = this.contact(clock);
    const outage = this.outage;
    for (const run of this.runs.values()) {
      const until = run.status === 'running' ? run.leaseUntil?.getTime() : undefined;
      if (until === undefined || until >= now) continue;
      // Lapsed after an outage began, and the owners' grace is not over: its owner may be alive (see AgentRunClock).
      if (outage && until > outage.from && now < outage.to + clock.graceMs) continue;
      Object.assign(run, { status: 'interrupted', leaseOwner: null, leaseUntil: null, error: LEASE_EXPIRED_MESSAGE });
    }
    const take = Math.max(0, limit);
    const of = (status: 'queued' | 'interrupted') =>
      [...this.runs.values()]
        .filter((r) => r.status === status)
        .slice(0, take)
        .map((r) => r.id);
    return { interrupted: of('interrupted'), queued: of('queued') };
  }

  async mailbox(windowMs: number): Promise<AgentRunMailbox> {
    let queued = 0;
    for (const run of this.runs.values()) if (isWaiting(run)) queued++;
    const since = Date.now() - windowMs;
    let claimed = 0;
    for (const at of this.claimedAt.values()) if (at > since) claimed++;
    return { queued, claimed };
  }

  /** Record a contact on the store's clock; a gap of outageMs since the last one is an outage. Returns now. */
  private contact(clock: AgentRunClock): number {
    const now = Date.now();
    if (this.lastContact !== null && now - this.lastContact >= clock.outageMs) this.outage = { from: this.lastContact, to: now };
    this.lastContact = Math.max(this.lastContact ?? now, now);
    return now;
  }

  async appendJournal(lease: AgentRunLease, entries: readonly RunJournalEntry[], leaseMs?: number): Promise<boolean> {
    const run = this.held(lease);
    if (!run) return false;
    if (leaseMs !== undefined) run.leaseUntil = new Date(Math.max(run.leaseUntil?.getTime() ?? 0, Date.now() + leaseMs));
    const journal = this.journals.get(lease.runId) ?? [];
    const added: string[] = [];
    // All checked before any is kept: the batch is written whole or not at all.
    for (const entry of entries) {
      const text = canonicalJson(entry);
      if (entry.seq < journal.length) {
        if (journal[entry.seq] !== text) throw new RunJournalConflictException(lease.runId, entry.seq);
        continue;
      }
      // The places are consecutive: a gap would be a place no reader reaches.
      if (!Number.isSafeInteger(entry.seq) || entry.seq !== journal.length + added.length)
        throw new RunJournalConflictException(lease.runId, entry.seq);
      added.push(text);
    }
    journal.push(...added);
    this.journals.set(lease.runId, journal);
    return true;
  }

  async readJournal(tenantId: string, runId: string, page?: JournalPage): Promise<RunJournalEntry[]> {
    const run = this.runs.get(runId);
    if (!tenantId || !run || run.tenantId !== tenantId) return [];
    const { afterSeq, limit } = journalPage(page);
    // An entry's seq is its place: the page after afterSeq starts at afterSeq + 1.
    return (this.journals.get(runId) ?? []).slice(afterSeq + 1, afterSeq + 1 + limit).map((t) => JSON.parse(t) as RunJournalEntry);
  }

  private held(lease: AgentRunLease): Mutable<AgentRunRecord> | undefined {
    const run = this.runs.get(lease.runId);
    return run && run.status === 'running' && run.leaseOwner === lease.owner && run.attempts === lease.attempt ? run : undefined;
  }
}

/** A deep copy of JSON data (steps, approvals), so that callers never share the stored objects. */
const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

function copy(run: AgentRunRecord): AgentRunRecord {
  return {
    ...run,
    permissions: [...run.permissions],
    steps: clone(run.steps),
    pendingApprovals: clone(run.pendingApprovals),
    waitingFor: [...(run.waitingFor ?? [])],
    decisions: clone(run.decisions ?? []),
    waitUntil: run.waitUntil ? new Date(run.waitUntil) : null,
  };
}
