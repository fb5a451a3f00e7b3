import { isScopeId } from '@zmodu/guard';
import { LEASE_EXPIRED_MESSAGE, OUT_OF_ATTEMPTS_MESSAGE } from '../agent.messages';
import { AgentRunOutcome, AgentRunRecord, AgentRunStore, MAX_RUN_ATTEMPTS, NewAgentRun } from './worker.ports';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * Run records in this process's memory (tests, single-instance development): they do not survive a restart.
 * Every method runs to completion without awaiting, so each change is atomic within the process.
 */
export class InMemoryAgentRunStore implements AgentRunStore {
  private readonly runs = new Map<string, Mutable<AgentRunRecord>>();

  async insert(runs: readonly NewAgentRun[]): Promise<void> {
    for (const r of runs) if (this.runs.has(r.id)) throw new Error(`A run with id '${r.id}' is already stored.`);
    for (const r of runs)
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
      });
  }

  async get(tenantId: string, runId: string): Promise<AgentRunRecord | null> {
    const run = this.runs.get(runId);
    return run && isScopeId(tenantId) && run.tenantId === tenantId ? copy(run) : null;
  }

  async claim(runId: string, owner: string, leaseMs: number): Promise<AgentRunRecord | null> {
    const run = this.runs.get(runId);
    if (!run || (run.status !== 'queued' && run.status !== 'interrupted')) return null;
    if (run.attempts >= run.maxAttempts) {
      Object.assign(run, {
        status: 'failed',
        error: OUT_OF_ATTEMPTS_MESSAGE + (run.error ? ` Last: ${run.error}` : ''),
        finishedAt: new Date(),
      });
      return copy(run);
    }
    Object.assign(run, {
      status: 'running',
      leaseOwner: owner,
      leaseUntil: new Date(Date.now() + leaseMs),
      attempts: run.attempts + 1,
      startedAt: run.startedAt ?? new Date(),
    });
    return copy(run);
  }

  async heartbeat(owner: string, runIds: readonly string[], leaseMs: number): Promise<string[]> {
    const lost: string[] = [];
    for (const id of runIds) {
      const run = this.runs.get(id);
      if (run && run.status === 'running' && run.leaseOwner === owner) run.leaseUntil = new Date(Date.now() + leaseMs);
      else lost.push(id);
    }
    return lost;
  }

  async finish(runId: string, owner: string, o: AgentRunOutcome): Promise<boolean> {
    const run = this.held(runId, owner);
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

  async release(runId: string, owner: string, reason: string): Promise<boolean> {
    const run = this.held(runId, owner);
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

  async recoverable(limit: number): Promise<string[]> {
    const now = Date.now();
    for (const run of this.runs.values())
      if (run.status === 'running' && run.leaseUntil && run.leaseUntil.getTime() < now)
        Object.assign(run, { status: 'interrupted', leaseOwner: null, leaseUntil: null, error: LEASE_EXPIRED_MESSAGE });
    const open = [...this.runs.values()].filter((r) => r.status === 'queued' || r.status === 'interrupted');
    return open.slice(0, Math.max(0, limit)).map((r) => r.id);
  }

  async countQueued(): Promise<number> {
    let n = 0;
    for (const run of this.runs.values()) if (run.status === 'queued' || run.status === 'interrupted') n++;
    return n;
  }

  private held(runId: string, owner: string): Mutable<AgentRunRecord> | undefined {
    const run = this.runs.get(runId);
    return run && run.status === 'running' && run.leaseOwner === owner ? run : undefined;
  }
}

/** A deep copy of JSON data (steps, approvals), so that callers never share the stored objects. */
const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

function copy(run: AgentRunRecord): AgentRunRecord {
  return { ...run, permissions: [...run.permissions], steps: clone(run.steps), pendingApprovals: clone(run.pendingApprovals) };
}
