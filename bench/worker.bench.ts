import { INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  AgentModule,
  AgentRegistry,
  AgentRunRecord,
  AgentWorker,
  AgentWorkerModule,
  ModelProvider,
  ModelRequest,
  ModelTurn,
} from '@zmodu/agent';
import { median } from './measure';
import { Row } from './report';

// p-queue 8 is ESM; Node 20.20 can require() it.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const PQueue = require('p-queue').default as new (options: { concurrency: number }) => {
  add<T>(task: () => Promise<T>): Promise<T>;
  onIdle(): Promise<void>;
};

const CONCURRENCY = 4;
const GOALS = 2000;
const ROUNDS = 5;
const LATENCY_SAMPLES = 200;
const SCOPE = { tenantId: 'bench', userId: 'bench', permissions: [] as string[] };

/** A no-op model: one final answer, and the time each goal's run reached the model (its start). */
class NoopModel implements ModelProvider {
  readonly name = 'noop';
  readonly startedAt = new Map<string, bigint>();
  async complete(req: ModelRequest): Promise<ModelTurn> {
    const first = req.messages[0];
    if (first?.role === 'user') this.startedAt.set(first.content, process.hrtime.bigint());
    return { text: 'ok', toolCalls: [], usage: { inputTokens: 1, outputTokens: 1 } };
  }
}

async function boot(model: NoopModel): Promise<INestApplicationContext> {
  @Module({
    imports: [
      AgentModule.forRoot({
        agents: [{ name: 'noop', provider: model, skills: [], guard: { allow: [], allowExecute: false } }],
        guard: { auditStore: 'memory', quotaStore: 'memory' },
      }),
      AgentWorkerModule.forRoot({ runStore: 'memory', concurrency: CONCURRENCY, mailboxSize: GOALS * 2, mailboxPerTenant: GOALS * 2 }),
    ],
  })
  class WorkerBenchModule {}
  const app = await NestFactory.createApplicationContext(WorkerBenchModule, { logger: false });
  await app.init();
  return app;
}

const ms = (from: bigint, to: bigint) => Number(to - from) / 1e6;

/**
 * The AgentWorker (store insert, claim, lease, finish and result per goal, on the memory run store) against p-queue
 * running the same Agent.run with the same concurrency: throughput of a burst of goals, and post-to-start latency of
 * one goal on an idle worker. The same no-op model and agent on both sides.
 */
export async function runWorkerBench(log: (line: string) => void): Promise<{ rows: Row[] }> {
  const model = new NoopModel();
  const app = await boot(model);
  try {
    const worker = app.get(AgentWorker);
    const agent = app.get(AgentRegistry).get('noop');
    let done = 0;
    let failed = 0;
    worker.onResult((r: AgentRunRecord) => {
      done++;
      if (r.status !== 'succeeded') failed++;
    });

    const burstWorker = async (round: number): Promise<number> => {
      const target = done + GOALS;
      const t0 = process.hrtime.bigint();
      await Promise.all(Array.from({ length: GOALS }, (_, i) => worker.post(`w${round}-${i}`, SCOPE)));
      while (done < target) await new Promise((r) => setImmediate(r));
      return ms(t0, process.hrtime.bigint());
    };
    const burstQueue = async (round: number): Promise<number> => {
      const queue = new PQueue({ concurrency: CONCURRENCY });
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < GOALS; i++) void queue.add(() => agent.run(`q${round}-${i}`, SCOPE));
      await queue.onIdle();
      return ms(t0, process.hrtime.bigint());
    };
    const throughput = { worker: [] as number[], queue: [] as number[] };
    for (let round = 0; round < ROUNDS + 1; round++) {
      const w = await burstWorker(round);
      const q = await burstQueue(round);
      if (round === 0) continue; // warm-up
      throughput.worker.push(w);
      throughput.queue.push(q);
    }
    if (failed) throw new Error(`${failed} worker runs did not succeed`);
    const workerMs = median(throughput.worker);
    const queueMs = median(throughput.queue);
    log(
      `worker: ${GOALS} goals in ${workerMs.toFixed(0)} ms (${((GOALS / workerMs) * 1000).toFixed(0)}/s), p-queue ${queueMs.toFixed(0)} ms`,
    );

    const latency = { worker: [] as number[], queue: [] as number[] };
    for (let i = 0; i < LATENCY_SAMPLES; i++) {
      const target = done + 1;
      const goal = `lw-${i}`;
      const t0 = process.hrtime.bigint();
      await worker.post(goal, SCOPE);
      while (done < target) await new Promise((r) => setImmediate(r));
      latency.worker.push(ms(t0, model.startedAt.get(goal) as bigint));
      const queue = new PQueue({ concurrency: CONCURRENCY });
      const qGoal = `lq-${i}`;
      const t1 = process.hrtime.bigint();
      await queue.add(() => agent.run(qGoal, SCOPE));
      latency.queue.push(ms(t1, model.startedAt.get(qGoal) as bigint));
    }
    const workerLatency = median(latency.worker);
    const queueLatency = median(latency.queue);
    log(
      `worker: post-to-start ${(workerLatency * 1000).toFixed(0)} us, p-queue add-to-start ${(queueLatency * 1000).toFixed(0)} us (medians)`,
    );

    return {
      rows: [
        {
          name: `AgentWorker, ${GOALS} goals, concurrency ${CONCURRENCY}, memory run store, no-op model, vs p-queue running Agent.run (ratio = worker/p-queue)`,
          value: workerMs,
          unit: 'ms/burst',
          baseline: queueMs,
          target: { text: 'ratio <= 5, i.e. at least 0.2x p-queue throughput (issue 13)', met: workerMs / queueMs <= 5 },
        },
        {
          name: 'AgentWorker post-to-start latency on an idle worker vs p-queue add-to-start (ratio = worker/p-queue)',
          value: workerLatency,
          unit: 'ms',
          baseline: queueLatency,
          target: { text: 'ratio <= 5 (issue 13)', met: workerLatency / queueLatency <= 5 },
        },
      ],
    };
  } finally {
    await app.close();
  }
}
