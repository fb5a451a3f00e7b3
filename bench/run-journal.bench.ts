import { randomUUID } from 'node:crypto';
import { INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { getDataSourceToken, TypeOrmModule } from '@nestjs/typeorm';
import { AgentModule, AgentRegistry } from '@zmodu/agent';
import { zmoduMigrations } from '@zmodu/guard';
import { TypeOrmAgentRunStore } from '@zmodu/agent/internal';
import { DataSource } from 'typeorm';
import { AGENT_SPEC, CatalogSkills, GOAL, TOOLS_PER_RUN } from './agent-loop.bench';
import { BenchServer, withBenchDatabase } from './bench-database';
import { msPerRun } from './measure';
import { Row } from './report';

/**
 * What the run journal adds to a worker's run on PostgreSQL: the same run (claim, the agent loop of three tool calls
 * and an answer, the outcome written) with the journal (a conditional insert per model turn and per tool call, under
 * the claim) and without it. Target: at most 1.3x.
 */
export async function runRunJournalBench(log: (line: string) => void, server: BenchServer | null): Promise<{ rows: Row[] }> {
  if (!server) return { rows: [] };
  return withBenchDatabase(server, 'zj', async (url) => {
    @Module({
      imports: [
        TypeOrmModule.forRoot({ type: 'postgres', url, migrations: zmoduMigrations(), migrationsRun: true, extra: { max: 4 } }),
        AgentModule.forRoot({
          agents: [AGENT_SPEC],
          guard: { auditStore: 'memory', quotaStore: 'memory' },
        }),
      ],
      providers: [CatalogSkills],
    })
    class BenchJournalModule {}
    const app: INestApplicationContext = await NestFactory.createApplicationContext(BenchJournalModule, { logger: false });
    try {
      const store = new TypeOrmAgentRunStore(app.get<DataSource>(getDataSourceToken()));
      const agent = app.get(AgentRegistry).get('bench');
      const scope = { tenantId: 't1', userId: 'u1', permissions: [] as string[] };
      const workerRun = (journaled: boolean) => async () => {
        const id = randomUUID();
        await store.insert([{ id, agent: 'bench', goal: GOAL, maxAttempts: 3, ...scope }]);
        const claimed = await store.claim(id, 'bench', 60_000);
        if (!claimed) throw new Error('the bench run was not claimed');
        const lease = { runId: id, owner: 'bench', attempt: claimed.attempts };
        const journal = journaled
          ? { entries: [], append: (batch: Parameters<typeof store.appendJournal>[1]) => store.appendJournal(lease, batch) }
          : undefined;
        const result = await agent.run(GOAL, { ...scope, runId: id, ...(journal ? { journal } : {}) });
        if (result.stoppedReason !== 'final' || result.steps.length !== TOOLS_PER_RUN + 1)
          throw new Error(`the bench run ended ${result.stoppedReason}: ${result.error}`);
        const finished = await store.finish(lease, {
          status: 'succeeded',
          answer: result.answer,
          stoppedReason: result.stoppedReason,
          steps: result.steps,
          pendingApprovals: [],
          error: null,
        });
        if (!finished) throw new Error('the bench run lost its lease');
        return result.steps.length;
      };
      const withJournal = workerRun(true);
      // Check once that the journal holds the run: four turns and three calls.
      const probe = randomUUID();
      await store.insert([{ id: probe, agent: 'bench', goal: GOAL, maxAttempts: 3, ...scope }]);
      const held = await store.claim(probe, 'bench', 60_000);
      const lease = { runId: probe, owner: 'bench', attempt: held?.attempts ?? 0 };
      await agent.run(GOAL, { ...scope, runId: probe, journal: { entries: [], append: (batch) => store.appendJournal(lease, batch) } });
      const entries = await store.readJournal('t1', probe);
      if (
        entries.filter((e) => e.kind === 'turn').length !== TOOLS_PER_RUN + 1 ||
        entries.filter((e) => e.kind === 'call').length !== TOOLS_PER_RUN
      )
        throw new Error(`the journal holds ${entries.length} entries: ${entries.map((e) => e.kind).join(', ')}`);
      log(`run journal: a journaled run writes ${entries.length} entries (${TOOLS_PER_RUN + 1} turns, ${TOOLS_PER_RUN} calls)`);
      const ms = await msPerRun({ journaled: withJournal, plain: workerRun(false) }, { warmupRounds: 2, rounds: 7, runsPerRound: 40 });
      log(`run journal: ${ms.journaled.toFixed(2)} ms/run with the journal, ${ms.plain.toFixed(2)} ms/run without`);
      return {
        rows: [
          {
            name: 'worker run on PostgreSQL (claim, 3 tool calls, answer, outcome): with the run journal vs without (ratio = with/without)',
            value: ms.journaled,
            unit: 'ms/run',
            baseline: ms.plain,
            target: { text: 'ratio <= 1.3', met: ms.journaled / ms.plain <= 1.3 },
          },
        ],
      };
    } finally {
      await app.close();
    }
  });
}
