import { Injectable } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentModule } from '../agent.module';
import { AgentWorkerModule } from '../worker/agent-worker.module';
import { AgentJobsModule } from './agent-jobs.module';
import { SchedulePackageUnavailableException } from '../exceptions/schedule-package-unavailable.exception';
import { ScriptedModelProvider } from '../providers/scripted-model.provider';
import { spec } from '../worker/__fixtures__/worker-fixtures';
import { AgentCron, agentCronProblem } from './agent-cron.decorator';
import { loadSchedulePackage } from './schedule-package';

const NOT_INSTALLED = /AgentJobsModule needs the package @nestjs\/schedule .* is not installed: npm install @nestjs\/schedule@\^12/;

const agents = () => [spec(new ScriptedModelProvider([{ text: 'done' }]))];

@Injectable()
class Hourly {
  @AgentCron('0 * * * *', { name: 'hourly', tenantId: 't1', userId: 'ops', permissions: [] })
  report(): string {
    return 'report';
  }
}

@Injectable()
class HourlyAgain {
  @AgentCron('30 * * * *', { name: 'hourly', tenantId: 't1', userId: 'ops', permissions: [] })
  report(): string {
    return 'again';
  }
}

describe('@nestjs/schedule, an optional peer: loaded when jobs or @AgentCron are used', () => {
  it('loadSchedulePackage names the package and the install command when it is not installed (a real require from a folder without it)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'zmodu-no-schedule-'));
    try {
      writeFileSync(join(dir, 'package.json'), '{"name":"bare"}');
      const bare = createRequire(join(dir, 'index.js'));
      expect(() => bare.resolve('@nestjs/schedule')).toThrow(/Cannot find module/);
      const load = () => loadSchedulePackage('AgentJobsModule', () => bare('@nestjs/schedule'));
      expect(load).toThrow(SchedulePackageUnavailableException);
      expect(load).toThrow(NOT_INSTALLED);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says which Node.js can require it on one that cannot (ERR_REQUIRE_ESM), and what failed otherwise', () => {
    const failing = (code: string | undefined, message: string) => () => {
      throw Object.assign(new Error(message), code ? { code } : {});
    };
    expect(() => loadSchedulePackage('@AgentCron "x"', failing('ERR_REQUIRE_ESM', 'require() of ES Module'))).toThrow(
      /@AgentCron "x" needs the package @nestjs\/schedule .* is an ES module that this Node.js \(v[\d.]+\) cannot require: run Node.js 22.12\+ \(require of ES modules\)/,
    );
    // A module @nestjs/schedule itself lacks is not "@nestjs/schedule is not installed".
    expect(() => loadSchedulePackage('jobs', failing('MODULE_NOT_FOUND', "Cannot find module 'cron'"))).toThrow(
      /could not be loaded \(Cannot find module 'cron'\): reinstall it/,
    );
    expect(() => loadSchedulePackage('jobs', () => ({}))).toThrow(/exports no SchedulerRegistry or Cron/);
    expect(loadSchedulePackage('jobs').SchedulerRegistry.name).toBe('SchedulerRegistry');
  });

  it('fails the boot of AgentModule with jobs, naming the package, when it cannot be required; boots without jobs', async () => {
    await jest.isolateModulesAsync(async () => {
      jest.doMock('@nestjs/schedule', () => {
        throw Object.assign(new Error("Cannot find module '@nestjs/schedule' from 'schedule-package.ts'"), { code: 'MODULE_NOT_FOUND' });
      });
      // Everything from this registry, so that the Nest classes are the ones AgentModule sees.
      /* eslint-disable @typescript-eslint/no-require-imports */
      const { Test: IsolatedTest } = require('@nestjs/testing') as typeof import('@nestjs/testing');
      const { AgentModule: IsolatedAgentModule } = require('../agent.module') as typeof import('../agent.module');
      const { AgentWorkerModule: IsolatedWorkerModule } =
        require('../worker/agent-worker.module') as typeof import('../worker/agent-worker.module');
      const { AgentJobsModule: IsolatedJobsModule } = require('./agent-jobs.module') as typeof import('./agent-jobs.module');
      /* eslint-enable @typescript-eslint/no-require-imports */
      const compile = (jobs: boolean) =>
        IsolatedTest.createTestingModule({
          imports: [
            IsolatedAgentModule.forRoot({ agents: agents(), guard: { auditStore: 'memory', quotaStore: 'memory' } }),
            IsolatedWorkerModule.forRoot({ runStore: 'memory' }),
            ...(jobs ? [IsolatedJobsModule.forRoot({ store: 'memory' })] : []),
          ],
        }).compile();
      try {
        await expect(compile(true)).rejects.toThrow(NOT_INSTALLED);
        const app = await compile(false);
        await app.init();
        await app.close();
      } finally {
        jest.dontMock('@nestjs/schedule');
      }
    });
  });

  it('@AgentCron: checks its arguments when applied; fails the boot without jobs, without ScheduleModule, with an unknown agent or a taken name', async () => {
    const opts = { name: 'r', tenantId: 't1', userId: 'ops', permissions: [] };
    expect(agentCronProblem('0 * * * *', opts)).toBeNull();
    expect(agentCronProblem('*/5 * * * * *', opts)).toMatch(/more than once a minute/);
    expect(agentCronProblem('0 * * * *', { ...opts, name: '' })).toMatch(/name is required/);
    expect(agentCronProblem('0 * * * *', { ...opts, tenantId: '' })).toMatch(/tenantId is required/);
    expect(agentCronProblem('0 * * * *', { ...opts, permissions: 'all' as unknown as string[] })).toMatch(/permissions must be an array/);
    expect(() => AgentCron('0 * * * *', { ...opts, timeZone: 'Nowhere/Land' })).toThrow(TypeError);

    const boot = async (options: { jobs?: boolean; schedule?: boolean; agent?: string }, providers: (new () => object)[] = [Hourly]) => {
      const app = await Test.createTestingModule({
        imports: [
          ...(options.schedule === false ? [] : [ScheduleModule.forRoot()]),
          AgentModule.forRoot({
            agents: options.agent ? [spec(new ScriptedModelProvider([{ text: 'x' }]), { name: options.agent }), ...agents()] : agents(),
            guard: { auditStore: 'memory', quotaStore: 'memory' },
          }),
          AgentWorkerModule.forRoot({ runStore: 'memory' }),
          ...(options.jobs === false ? [] : [AgentJobsModule.forRoot({ store: 'memory' })]),
        ],
        providers,
      }).compile();
      try {
        await app.init();
      } finally {
        await app.close().catch(() => undefined);
      }
    };
    await expect(boot({ jobs: false })).rejects.toThrow(
      /@AgentCron on Hourly\.report claims its ticks in the job store: import AgentJobsModule/,
    );
    await expect(boot({ schedule: false })).rejects.toThrow(
      /@AgentCron on Hourly\.report is a @Cron of @nestjs\/schedule.*ScheduleModule\.forRoot\(\)/,
    );
    await expect(boot({ agent: 'ops' })).rejects.toThrow(
      /@AgentCron "hourly" on Hourly\.report: name its agent: this application defines 2 agents/,
    );
    // (With ScheduleModule, its explorer refuses the second @Cron named "hourly" first.)
    await expect(boot({ schedule: false }, [Hourly, HourlyAgain])).rejects.toThrow(
      /@AgentCron "hourly" is declared twice \(Hourly\.report and HourlyAgain\.report\)/,
    );
    await expect(boot({})).resolves.toBeUndefined();
  });
});
