import { Injectable } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { OptionalPeerUnavailableException } from '@zmodu/core';
import { simulateMissingPeers } from '@zmodu/guard/testing';
import { AgentModule } from '../agent.module';
import { AgentWorkerModule } from '../worker/agent-worker.module';
import { AgentJobsModule } from './agent-jobs.module';
import { AgentRegistry } from '../agent.registry';
import { ScriptedModelProvider } from '../providers/scripted-model.provider';
import { spec } from '../worker/__fixtures__/worker-fixtures';
import { AgentJob } from './agent-job.decorator';
import { cronProblem, nextTick } from './agent-job-cron';
import { loadCronPackage } from './cron-package';

/**
 * `cron` is an optional peer of @zmodu/agent: only the scheduled jobs need it (their cron expressions and timers), so an
 * application without jobs does not install it (nor luxon under it). "Without it" is simulated (simulateMissingPeers).
 */
const MISSING = (feature: string) => `${feature} needs the cron package: npm install cron@^4.4.0`;

const boot = (jobs: boolean) =>
  Test.createTestingModule({
    imports: [
      ScheduleModule.forRoot(),
      AgentModule.forRoot({
        agents: [spec(new ScriptedModelProvider([{ text: 'done' }]))],
        guard: { auditStore: 'memory', quotaStore: 'memory' },
      }),
      AgentWorkerModule.forRoot({ runStore: 'memory' }),
      ...(jobs ? [AgentJobsModule.forRoot({ store: 'memory' })] : []),
    ],
  }).compile();

async function thrownBy(fn: () => unknown): Promise<unknown> {
  try {
    await fn();
  } catch (err) {
    return err;
  }
  return undefined;
}

describe('cron, an optional peer: loaded when scheduled jobs are used', () => {
  it('is loaded on first use and reads cron expressions', () => {
    expect(typeof loadCronPackage().CronJob).toBe('function');
    expect(cronProblem('0 9 * * 1-5', 'Europe/Paris')).toBeNull();
    expect(nextTick('0 9 * * *', 'UTC', new Date('2026-12-03T10:00:00Z')).toISOString()).toBe('2026-12-04T09:00:00.000Z');
  });

  it('fails the boot of AgentModule with jobs, naming the package and the range to install', async () => {
    const restore = simulateMissingPeers('cron');
    let thrown: unknown;
    try {
      thrown = await thrownBy(() => boot(true).then((app) => app.close()));
    } finally {
      restore();
    }
    expect(thrown).toBeInstanceOf(OptionalPeerUnavailableException);
    expect((thrown as Error).message).toBe(MISSING('AgentJobsModule'));
    expect(thrown).toMatchObject({ packageName: 'cron', missing: true });
  });

  it('@AgentJob, applied without it, throws the same error (at import, where the job is declared)', () => {
    const restore = simulateMissingPeers('cron');
    try {
      expect(() => {
        @Injectable()
        class Nightly {
          @AgentJob({ name: 'nightly', cron: '0 3 * * *', timeZone: 'UTC', goal: 'g', tenantId: 't1', userId: 'ops', permissions: [] })
          run(): void {}
        }
        return Nightly;
      }).toThrow(MISSING('scheduled agent jobs'));
    } finally {
      restore();
    }
  });

  it('an application without jobs boots and runs an agent without it', async () => {
    const restore = simulateMissingPeers('cron');
    try {
      const app = await boot(false);
      await app.init();
      try {
        const result = await app.get(AgentRegistry).get('trader').run('hello', { tenantId: 't1', userId: 'u1' });
        expect(result.stoppedReason).toBe('final');
        expect(result.answer).toBe('done');
      } finally {
        await app.close();
      }
    } finally {
      restore();
    }
  });
});
