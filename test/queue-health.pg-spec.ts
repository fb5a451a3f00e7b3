import { HealthIndicatorService } from '@nestjs/terminus';
import { GoalQueueHealthIndicator } from '@zmodu/admin';
import { PgBossGoalQueue } from '@zmodu/agent/internal';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import request from 'supertest';
import { sampleAppsOnTestDatabase } from './support/sample-apps';

/** The goal queue of cluster mode on a real PostgreSQL (runs with ZMODU_TEST_DATABASE_URL, as in .ci/run): its health probe. */
describe('GoalQueueHealthIndicator on the pg-boss queue', () => {
  let db: TestDatabase;
  let queue: PgBossGoalQueue | undefined;
  const indicator = new GoalQueueHealthIndicator(new HealthIndicatorService());

  beforeAll(async () => {
    db = await createTestDatabase();
  });

  afterAll(async () => {
    await queue?.close();
    await db?.drop();
  });

  it('is up while pg-boss answers (with the goals waiting in it), down once it is stopped', async () => {
    queue = new PgBossGoalQueue({
      connection: { connectionString: db.location.url as string },
      schema: 'zmodu_boss',
      name: 'zmodu_agent_goals',
      pollingIntervalSeconds: 30,
      notify: false,
    });
    await queue.start(() => new Promise(() => undefined), 1);
    await expect(queue.probe()).resolves.toEqual({ queued: 0 });
    expect(await indicator.isHealthy('queue', queue)).toEqual({ queue: { status: 'up', queue: 'shared', queued: 0 } });
    await queue.close();
    expect(await indicator.isHealthy('queue', queue)).toEqual({
      queue: { status: 'down', queue: 'shared', message: expect.stringMatching(/^the goal queue is unreachable: pg-boss is not started/) },
    });
  });
});

describe('the sample in cluster mode: readiness checks the pg-boss goal queue', () => {
  const apps = sampleAppsOnTestDatabase('test-secret-that-is-long-enough-for-hs256-0123456789');

  it('answers 200 with the queue up, and without the queue check when the queue is in-process', async () => {
    const clustered = await apps.boot({ seed: false, queue: { driver: 'pg-boss' } });
    const ready = await request(clustered.getHttpServer()).get('/health/ready').expect(200);
    expect(ready.body.details).toMatchObject({
      database: { status: 'up' },
      outbox: { status: 'up' },
      queue: { status: 'up', queue: 'shared', queued: expect.any(Number) },
    });
    await clustered.close();
    apps.forget();
    const single = await apps.boot({ seed: false });
    expect((await request(single.getHttpServer()).get('/health/ready').expect(200)).body.details.queue).toBeUndefined();
  });
});
