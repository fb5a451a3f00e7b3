import { isScopeId } from '@zmodu/core';
import { AgentJobRecord, AgentJobStore, NewAgentJob, cronTickJobId } from './agent-job.ports';

/** Whether a job still fires at `now` (ms): not cancelled, not expired. */
const live = (j: AgentJobRecord, now = Date.now()) => !j.cancelledAt && (!j.expiresAt || j.expiresAt.getTime() > now);

/**
 * AgentJobStore in memory (one process, tests and single-instance apps without a database). `create` counts and inserts
 * with no await in between, so concurrent callers cannot pass the cap.
 */
export class InMemoryAgentJobStore implements AgentJobStore {
  private readonly jobs = new Map<string, AgentJobRecord>();
  private readonly ticks = new Map<string, { jobId: string; tick: Date; runId: string | null; claimedAt: number }>();

  async upsert(job: NewAgentJob): Promise<void> {
    this.put(job);
  }

  async create(job: NewAgentJob, maxActive: number): Promise<boolean> {
    if (this.jobs.has(job.id)) throw new Error(`a job with id ${job.id} exists`);
    let n = 0;
    for (const j of this.jobs.values()) if (j.tenantId === job.tenantId && live(j)) n++;
    if (n >= maxActive) return false;
    this.put(job);
    return true;
  }

  private put(job: NewAgentJob): void {
    const old = this.jobs.get(job.id);
    this.jobs.set(job.id, {
      ...job,
      permissions: [...job.permissions],
      task: job.task ?? null,
      expiresAt: job.expiresAt ?? null,
      createdAt: old?.createdAt ?? new Date(),
      cancelledAt: job.origin === 'static' ? null : (old?.cancelledAt ?? null),
      lastTickAt: old?.lastTickAt ?? null,
    });
  }

  async retireStatic(keepIds: readonly string[]): Promise<string[]> {
    const keep = new Set(keepIds);
    const retired: string[] = [];
    for (const job of this.jobs.values())
      if (job.origin === 'static' && !job.cancelledAt && !keep.has(job.id)) {
        this.jobs.set(job.id, { ...job, cancelledAt: new Date() });
        retired.push(job.id);
      }
    return retired;
  }

  async get(tenantId: string, jobId: string): Promise<AgentJobRecord | null> {
    const job = this.jobs.get(jobId);
    return job && isScopeId(tenantId) && job.tenantId === tenantId ? job : null;
  }

  async list(tenantId: string): Promise<AgentJobRecord[]> {
    return isScopeId(tenantId) ? [...this.jobs.values()].filter((j) => !j.cancelledAt && j.tenantId === tenantId) : [];
  }

  async active(): Promise<AgentJobRecord[]> {
    return [...this.jobs.values()].filter((j) => live(j));
  }

  async count(tenantId: string): Promise<number> {
    return (await this.list(tenantId)).filter((j) => live(j)).length;
  }

  async cancel(tenantId: string, jobId: string): Promise<boolean> {
    const job = await this.get(tenantId, jobId);
    if (!job || job.cancelledAt) return false;
    this.jobs.set(jobId, { ...job, cancelledAt: new Date() });
    return true;
  }

  async claimTick(jobId: string, tick: Date): Promise<boolean> {
    const key = `${jobId}\u0000${tick.toISOString()}`;
    const job = this.jobs.get(jobId);
    // A cancelled or expired job fires no more, nor a tick at or past its expiry.
    if (!job || !live(job) || (job.expiresAt && job.expiresAt <= tick) || this.ticks.has(key)) return false;
    this.ticks.set(key, { jobId, tick, runId: null, claimedAt: Date.now() });
    if (!job.lastTickAt || job.lastTickAt < tick) this.jobs.set(jobId, { ...job, lastTickAt: tick });
    return true;
  }

  async claimCronTick(name: string, tick: Date): Promise<boolean> {
    const jobId = cronTickJobId(name);
    const key = `${jobId}\u0000${tick.toISOString()}`;
    if (this.ticks.has(key)) return false;
    this.ticks.set(key, { jobId, tick, runId: null, claimedAt: Date.now() });
    return true;
  }

  async setTickRun(jobId: string, tick: Date, runId: string): Promise<void> {
    const key = `${jobId}\u0000${tick.toISOString()}`;
    const claim = this.ticks.get(key);
    if (claim) claim.runId = runId;
  }

  async reclaimUnposted(olderThanMs: number, limit: number): Promise<{ job: AgentJobRecord; tick: Date }[]> {
    const now = Date.now();
    const out: { job: AgentJobRecord; tick: Date }[] = [];
    for (const claim of [...this.ticks.values()].sort((a, b) => a.tick.getTime() - b.tick.getTime())) {
      if (out.length >= limit) break;
      const job = this.jobs.get(claim.jobId);
      if (!job || !live(job, now) || claim.runId !== null) continue;
      if (claim.claimedAt >= now - olderThanMs || claim.tick.getTime() <= now - 86_400_000) continue;
      claim.claimedAt = now;
      out.push({ job, tick: claim.tick });
    }
    return out;
  }
}
