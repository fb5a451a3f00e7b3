import { isScopeId } from '@zmodu/guard';
import { AgentJobRecord, AgentJobStore, NewAgentJob } from './agent-job.ports';

/** AgentJobStore in memory (one process, tests and single-instance apps without a database). */
export class InMemoryAgentJobStore implements AgentJobStore {
  private readonly jobs = new Map<string, AgentJobRecord>();
  private readonly ticks = new Map<string, { jobId: string; tick: Date; runId: string | null; claimedAt: number }>();

  async upsert(job: NewAgentJob): Promise<void> {
    const old = this.jobs.get(job.id);
    this.jobs.set(job.id, {
      ...job,
      permissions: [...job.permissions],
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
    return isScopeId(tenantId) ? (await this.active()).filter((j) => j.tenantId === tenantId) : [];
  }

  async active(): Promise<AgentJobRecord[]> {
    return [...this.jobs.values()].filter((j) => !j.cancelledAt);
  }

  async count(tenantId: string): Promise<number> {
    return (await this.list(tenantId)).length;
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
    if (!job || job.cancelledAt || this.ticks.has(key)) return false; // a cancelled job fires no more
    this.ticks.set(key, { jobId, tick, runId: null, claimedAt: Date.now() });
    if (!job.lastTickAt || job.lastTickAt < tick) this.jobs.set(jobId, { ...job, lastTickAt: tick });
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
      if (!job || job.cancelledAt || claim.runId !== null) continue;
      if (claim.claimedAt >= now - olderThanMs || claim.tick.getTime() <= now - 86_400_000) continue;
      claim.claimedAt = now;
      out.push({ job, tick: claim.tick });
    }
    return out;
  }
}
