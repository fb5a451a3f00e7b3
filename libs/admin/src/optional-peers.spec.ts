import { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { GuardModule, TokenQuota } from '@zmodu/guard';
import { OptionalPeerUnavailableException } from '@zmodu/core';
import { simulateMissingPeers } from '@zmodu/guard/testing';
import { SkillsModule } from '@zmodu/skills';
import request from 'supertest';
import { as } from './__fixtures__/admin-fixtures';
import { GoalQueueHealthIndicator } from './health/goal-queue.health';
import { ZmoduHealthModule } from './health/health.module';
import { OutboxHealthIndicator } from './health/outbox.health';
import { MetricsModule } from './metrics/metrics.module';
import { ZmoduMetrics } from './metrics/zmodu-metrics';
import { SkillsController } from './skills.controller';
import { SWAGGER_DECORATORS } from './swagger-decorators';

/**
 * @nestjs/swagger, @nestjs/terminus and prom-client are optional peers of @zmodu/admin. Without @nestjs/swagger the
 * admin endpoints work the same (its decorators are no-ops); health (ZmoduHealthModule) and metrics (MetricsModule)
 * fail the boot naming the package they need. "Without" is simulated (simulateMissingPeers): nothing is uninstalled.
 */

/** The boot's rejection (or undefined when it boots). */
async function bootError(imports: unknown[]): Promise<unknown> {
  try {
    const app = await Test.createTestingModule({ imports: imports as [] }).compile();
    await app.close();
    return undefined;
  } catch (err) {
    return err;
  }
}

const core = () => [GuardModule.forRoot({ auditStore: 'memory', quotaStore: 'memory' }), SkillsModule.forRoot()];

describe('the optional peers of @zmodu/admin', () => {
  describe('@nestjs/swagger', () => {
    it('installed: the admin controllers carry its decorators (what an OpenAPI document is built from)', () => {
      expect(SWAGGER_DECORATORS).toBe(true);
      expect(Reflect.getMetadata('swagger/apiOperation', SkillsController.prototype.list)).toMatchObject({ summary: expect.any(String) });
      expect(Reflect.getMetadata('swagger/apiUseTags', SkillsController)).toEqual(['admin: skills']);
    });

    it('not installed: @zmodu/admin loads without requiring it, and the admin endpoints answer as before', async () => {
      let loaded!: {
        admin: typeof import('@zmodu/admin');
        decorators: typeof import('./swagger-decorators');
        controller: typeof import('./skills.controller');
        fixtures: typeof import('./__fixtures__/admin-fixtures');
        guard: typeof import('@zmodu/guard');
        skills: typeof import('@zmodu/skills');
      };
      let restore = () => {};
      // A registry of its own, where @nestjs/swagger is absent from the start (decorators run when a class is defined)
      // and would throw if anything required it.
      jest.isolateModules(() => {
        jest.doMock('@nestjs/swagger', () => {
          throw new Error('@nestjs/swagger was required');
        });
        /* eslint-disable @typescript-eslint/no-require-imports */
        restore = (require('@zmodu/guard/testing') as typeof import('@zmodu/guard/testing')).simulateMissingPeers('@nestjs/swagger');
        loaded = {
          admin: require('@zmodu/admin'),
          decorators: require('./swagger-decorators'),
          controller: require('./skills.controller'),
          fixtures: require('./__fixtures__/admin-fixtures'),
          guard: require('@zmodu/guard'),
          skills: require('@zmodu/skills'),
        };
        /* eslint-enable @typescript-eslint/no-require-imports */
      });
      jest.dontMock('@nestjs/swagger');
      let app: INestApplication | undefined;
      try {
        expect(loaded.decorators.SWAGGER_DECORATORS).toBe(false);
        expect(Reflect.getMetadata('swagger/apiOperation', loaded.controller.SkillsController.prototype.list)).toBeUndefined();
        expect(typeof loaded.admin.AdminModule).toBe('function');
        app = await loaded.fixtures.startAdminApp(
          [loaded.guard.GuardModule.forRoot({ auditStore: 'memory', quotaStore: 'memory' }), loaded.skills.SkillsModule.forRoot()],
          { skills: true },
          [loaded.fixtures.DeskSkills],
        );
        await request(app.getHttpServer()).get('/admin/skills').expect(401);
        await request(app.getHttpServer()).get('/admin/skills').set(as('acme', 'market:read')).expect(403);
        const listed = await request(app.getHttpServer())
          .get('/admin/skills')
          .set(as('acme', 'admin:skills', 'market:read'))
          .expect(200);
        expect((listed.body as Array<{ name: string }>).map((s) => s.name)).toEqual(['ledger.close', 'market.depth', 'market.quote']);
      } finally {
        await app?.close();
        restore();
      }
    });
  });

  describe('@nestjs/terminus (ZmoduHealthModule)', () => {
    it('not installed: the boot fails naming the package to install', async () => {
      const restore = simulateMissingPeers('@nestjs/terminus');
      let err: unknown;
      try {
        err = await bootError([...core(), ZmoduHealthModule]);
      } finally {
        restore();
      }
      expect(err).toBeInstanceOf(OptionalPeerUnavailableException);
      expect((err as Error).message).toBe(
        'the health indicators (ZmoduHealthModule) needs the @nestjs/terminus package: npm install @nestjs/terminus@^12',
      );
    });

    it('installed: the indicators are built and answer', async () => {
      const app = await Test.createTestingModule({ imports: [...core(), ZmoduHealthModule] }).compile();
      try {
        expect(await app.get(GoalQueueHealthIndicator).isHealthy('queue', null)).toEqual({ queue: { status: 'up', queue: 'none' } });
        // No outbox store in this application: down, saying what to import.
        expect(await app.get(OutboxHealthIndicator).isHealthy('outbox')).toEqual({
          outbox: { status: 'down', message: 'no outbox store with backlog figures (import OutboxModule)' },
        });
      } finally {
        await app.close();
      }
    });
  });

  describe('prom-client (MetricsModule)', () => {
    it('not installed: the boot fails naming the package to install', async () => {
      const restore = simulateMissingPeers('prom-client');
      let err: unknown;
      try {
        err = await bootError([...core(), MetricsModule.forRoot({ path: false })]);
      } finally {
        restore();
      }
      expect(err).toBeInstanceOf(OptionalPeerUnavailableException);
      expect((err as Error).message).toBe('the metrics (MetricsModule) needs the prom-client package: npm install prom-client@^15');
    });

    it('installed: the metrics count and scrape', async () => {
      const app = await Test.createTestingModule({ imports: [...core(), MetricsModule.forRoot({ path: false })] }).compile();
      try {
        await app.init();
        await app.get(TokenQuota).chargeQuietly({ tenantId: 't1', agent: 'a' }, 7);
        expect(await app.get(ZmoduMetrics).scrape()).toContain('zmodu_tokens_total{tenant="t1",agent="a"} 7');
      } finally {
        await app.close();
      }
    });
  });
});
