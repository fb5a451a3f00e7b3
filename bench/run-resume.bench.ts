import { Injectable, INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AgentModule, AgentWorker, AgentWorkerModule, ModelProvider, ModelRequest, ModelTurn, ScriptedModelProvider } from '@zmodu/agent';
import { zmoduMigrations } from '@zmodu/guard';
import { PipelineModule, ProposalPipeline } from '@zmodu/pipeline';
import { Skill } from '@zmodu/skills';
import { BenchServer, withBenchDatabase } from './bench-database';
import { median } from './measure';
import { Row } from './report';

@Injectable()
class BenchOrderSkills {
  @Skill({
    name: 'order.place',
    action: 'execute',
    staged: true,
    description: 'Place an order (staged)',
    parameters: { type: 'object', properties: { qty: { type: 'integer' } }, required: ['qty'], additionalProperties: false },
  })
  place(args: { qty: number }) {
    return { filled: 101.3, qty: args.qty };
  }
}

/** Proposes, then answers; tells when it is asked its second turn (the resumed run's first model request). */
class ResumeModel implements ModelProvider {
  readonly name = 'bench-resume';
  private readonly script = new ScriptedModelProvider([
    { toolCalls: [{ name: 'approval.submit', arguments: { action: 'order.place', payload: { qty: 5 } } }] },
    { text: 'done' },
  ]);
  private resumedAt: ((t: bigint) => void) | null = null;
  private startedAt: ((t: bigint) => void) | null = null;
  /** When the next resumed run asks its first model turn. */
  resumed(): Promise<bigint> {
    return new Promise((resolve) => (this.resumedAt = resolve));
  }
  /** When the next new run asks its first model turn. */
  started(): Promise<bigint> {
    return new Promise((resolve) => (this.startedAt = resolve));
  }
  async complete(request: ModelRequest): Promise<ModelTurn> {
    const now = process.hrtime.bigint();
    if (request.messages.some((m) => m.role === 'assistant')) this.resumedAt?.(now);
    else this.startedAt?.(now);
    return this.script.complete(request);
  }
}

/**
 * From a human's decision to the resumed run's first model request, on PostgreSQL with one instance idle: the
 * decision executes the proposal, the pipeline tells the worker (proposal_settled), the worker reads the proposal,
 * resumes the run (one conditional write), claims it, journals the decision and replays the journal up to the request.
 * Target: at most 50 ms (the median of 30); the baseline is what starting a new run takes the same way (a post to its
 * first model request), measured in the same run.
 */
export async function runRunResumeBench(log: (line: string) => void, server: BenchServer | null): Promise<{ rows: Row[] }> {
  if (!server) return { rows: [] };
  return withBenchDatabase(server, 'zr', async (url) => {
    const model = new ResumeModel();
    @Module({
      imports: [
        TypeOrmModule.forRoot({ type: 'postgres', url, migrations: zmoduMigrations(), migrationsRun: true }),
        AgentModule.forRoot({
          agents: [{ name: 'desk', provider: model, skills: ['approval.submit'], guard: { allow: ['approval.submit'] } }],
          guard: { auditStore: 'memory', quotaStore: 'memory' },
        }),
        AgentWorkerModule.forRoot({ runStore: 'typeorm' }),
        PipelineModule.forRoot({ actions: { 'order.place': { amount: () => 10 } }, proposable: ['order.place'], recoveryIntervalMs: 0 }),
      ],
      providers: [BenchOrderSkills],
    })
    class BenchResumeModule {}
    const app: INestApplicationContext = await NestFactory.createApplicationContext(BenchResumeModule, { logger: false });
    try {
      await app.init();
      const worker = app.get(AgentWorker);
      const pipeline = app.get(ProposalPipeline);
      const scope = { tenantId: 't1', userId: 'alice', permissions: [] as string[] };
      const approver = { tenantId: 't1', userId: 'lee', permissions: ['approval:decide'] };
      const samples: number[] = [];
      const starts: number[] = [];
      for (let i = 0; i < 34; i++) {
        const started = model.started();
        const s0 = process.hrtime.bigint();
        const { runId } = await worker.post('Place 5', { agent: 'desk', ...scope });
        const s1 = await started;
        if (i >= 4) starts.push(Number(s1 - s0) / 1e6);
        let proposalId: string | undefined;
        for (let tries = 0; tries < 2000 && !proposalId; tries++) {
          const run = await worker.get('t1', runId);
          if (run?.status === 'waiting' && worker.stats().running === 0) proposalId = run.waitingFor?.[0];
          else await new Promise((r) => setTimeout(r, 2));
        }
        if (!proposalId) throw new Error(`run ${runId} did not wait`);
        const p = await pipeline.get('t1', proposalId);
        const resumed = model.resumed();
        const t0 = process.hrtime.bigint();
        const out = await pipeline.decide(approver, proposalId, {
          decision: 'approve',
          reason: 'ok',
          version: p.version,
          step: p.waitingStep?.index ?? 0,
        });
        if (out.verdict !== 'executed') throw new Error(`the decision was ${out.verdict}`);
        const t1 = await resumed;
        if (i >= 4) samples.push(Number(t1 - t0) / 1e6);
      }
      const ms = median(samples);
      const start = median(starts);
      log(`run resume: decision to the resumed run's first model request, median ${ms.toFixed(2)} ms of ${samples.length}`);
      log(`run resume: a post to the new run's first model request, median ${start.toFixed(2)} ms`);
      return {
        rows: [
          {
            name: "a human's decision to the resumed run's first model request vs a post to a new run's, on PostgreSQL, one idle instance (median of 30)",
            value: ms,
            unit: 'ms',
            baseline: start,
            target: { text: 'value <= 50 ms', met: ms <= 50 },
          },
        ],
      };
    } finally {
      await app.close();
    }
  });
}
