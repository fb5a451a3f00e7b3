import { Controller, Get, INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { InProcessGoalQueue, PgBossGoalQueue } from '@zmodu/agent/internal';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import { OutboxRelay } from '@zmodu/outbox/internal';
import { OutboxService } from '@zmodu/outbox';
import { DataSource } from 'typeorm';
import request from 'supertest';
import { GoalQueueHealthIndicator, ProbedGoalQueue } from './goal-queue.health';
import { ZmoduHealthModule } from './health.module';
import { OutboxHealthIndicator, OutboxHealthLimits } from './outbox.health';
import { outboxTestImports } from '../__fixtures__/outbox-imports';

/** What the probe of the test reads: the limits and the queue, set by each test. */
const probe: { limits: OutboxHealthLimits; queue: ProbedGoalQueue | null } = { limits: {}, queue: null };

@Controller('health')
class ReadyController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly outbox: OutboxHealthIndicator,
    private readonly queue: GoalQueueHealthIndicator,
  ) {}

  @Get('ready')
  @HealthCheck()
  ready() {
    return this.health.check([() => this.outbox.isHealthy('outbox', probe.limits), () => this.queue.isHealthy('queue', probe.queue)]);
  }
}

describe('health indicators: the outbox backlog and the goal queue, through terminus', () => {
  let db: TestDatabase;
  let app: INestApplication;
  const ready = () => request(app.getHttpServer()).get('/health/ready');

  beforeAll(async () => {
    db = await createTestDatabase();
    const moduleRef = await Test.createTestingModule({
      imports: [...(await outboxTestImports(db)), TerminusModule.forRoot({ logger: false }), ZmoduHealthModule],
      controllers: [ReadyController],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  });

  beforeEach(() => {
    probe.limits = {};
    probe.queue = null;
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('is up on an empty outbox, with its figures', async () => {
    const res = await ready().expect(200);
    expect(res.body.details.outbox).toEqual({ status: 'up', pending: 0, delivering: 0, dead: 0, oldestPendingAgeSeconds: 0 });
    expect(res.body.details.queue).toEqual({ status: 'up', queue: 'none' });
  });

  it('is down (503) past the backlog limit, saying why; degraded (200) when asked to be', async () => {
    const outbox = app.get(OutboxService);
    for (const tenantId of ['t1', 't2', 't3']) await outbox.publish({ tenantId, topic: 'nobody.listens', payload: {} });
    probe.limits = { maxBacklog: 3 };
    await ready().expect(200);
    probe.limits = { maxBacklog: 2 };
    const down = await ready().expect(503);
    expect(down.body.error.outbox).toMatchObject({ status: 'down', pending: 3, message: '3 events undelivered (limit 2)' });
    probe.limits = { maxBacklog: 2, whenExceeded: 'degraded' };
    const degraded = await ready().expect(200);
    expect(degraded.body.details.outbox).toMatchObject({
      status: 'up',
      degraded: true,
      pending: 3,
      message: '3 events undelivered (limit 2)',
    });
  });

  it('is down when the oldest undelivered event waited too long, and past the dead-letter limit', async () => {
    await new Promise((r) => setTimeout(r, 1100));
    probe.limits = { maxOldestPendingMs: 1000 };
    const old = await ready().expect(503);
    expect(old.body.error.outbox.message).toMatch(/^the oldest undelivered event waits for \d+ s \(limit 1 s\)$/);
    probe.limits = { maxOldestPendingMs: 600_000 };
    await ready().expect(200);

    await app.get(OutboxService).publish({ tenantId: 't1', topic: 'always.fails', payload: {}, maxAttempts: 1 });
    await app.get(OutboxRelay).runOnce();
    probe.limits = { maxDeadLetters: 0 };
    const dead = await ready().expect(503);
    expect(dead.body.error.outbox).toMatchObject({ dead: 1, message: '1 dead letters (limit 0)' });
  });

  it('the goal queue: up in-process, down when pg-boss is not started (unreachable), down for a probe that hangs', async () => {
    probe.queue = new InProcessGoalQueue();
    expect((await ready().expect(200)).body.details.queue).toEqual({ status: 'up', queue: 'in-process' });
    probe.queue = new PgBossGoalQueue({
      connection: { connectionString: 'postgres://nobody@127.0.0.1:1/none' },
      schema: 'zmodu_boss',
      name: 'zmodu_agent_goals',
      pollingIntervalSeconds: 1,
      notify: false,
    });
    const down = await ready().expect(503);
    expect(down.body.error.queue).toEqual({
      status: 'down',
      queue: 'shared',
      message: 'the goal queue is unreachable: pg-boss is not started (the worker did not start, or it stopped)',
    });
    const hangs = app
      .get(GoalQueueHealthIndicator)
      .isHealthy('queue', { shared: true, probe: () => new Promise(() => undefined), stop: async () => undefined }, { timeoutMs: 50 });
    await expect(hangs).resolves.toEqual({
      queue: { status: 'down', queue: 'shared', message: 'the goal queue is unreachable: no answer within 50 ms' },
    });
  });

  it('is down, not an error, when the outbox store cannot be read (its database is gone)', async () => {
    await app.get(DataSource).destroy();
    const res = await ready().expect(503);
    expect(res.body.error.outbox.status).toBe('down');
    expect(res.body.error.outbox.message).toMatch(/^the outbox backlog could not be read: /);
  });
});
