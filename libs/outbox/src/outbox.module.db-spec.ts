import { Injectable, Module } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Guard, GuardModule } from '@zmodu/guard';
import { createSkillContext, SkillDispatcher, SkillRegistry, SkillsModule } from '@zmodu/skills';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import { NotificationMessage, NotifyModule, OutboxModule, OutboxService, ZMODU_OUTBOX_MIGRATIONS } from '@zmodu/outbox';
import { OutboxRelay } from '@zmodu/outbox/internal';

/** The application's configuration, from a module of its own: what the factories of forRootAsync read. */
@Injectable()
class AppConfig {
  readonly maxAttempts = 7;
  readonly sunk: NotificationMessage[] = [];
}

@Module({ providers: [AppConfig], exports: [AppConfig] })
class AppConfigModule {}

describe('OutboxModule.forRootAsync and NotifyModule.forRootAsync', () => {
  let db: TestDatabase;
  let app: TestingModule;

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot(await db.options({ migrations: ZMODU_OUTBOX_MIGRATIONS, migrationsRun: true })),
        GuardModule.forRoot({ auditStore: 'memory', quotaStore: 'memory' }),
        SkillsModule.forRoot(),
        OutboxModule.forRootAsync({
          imports: [AppConfigModule],
          inject: [AppConfig],
          useFactory: (config: AppConfig) => ({
            maxAttempts: config.maxAttempts,
            relay: { autoStart: false },
            // Given as undefined: the default stays.
            commandPermission: undefined,
            commands: [{ name: 'note.add', handler: () => ({ topic: 'note.added', payload: {} }) }],
          }),
        }),
        NotifyModule.forRootAsync({
          imports: [AppConfigModule],
          inject: [AppConfig],
          useFactory: (config: AppConfig) => ({ channels: { desk: { type: 'sink', handler: (m) => void config.sunk.push(m) } } }),
        }),
      ],
    }).compile();
    await app.init();
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('the outbox takes its options from the factory, and the defaults fill the rest', async () => {
    const id = await app.get(OutboxService).publish({ tenantId: 'acme', topic: 'x', payload: {} });
    expect(await app.get(OutboxService).get('acme', id)).toMatchObject({ maxAttempts: 7 });
    expect(app.get(SkillRegistry).get('command.execute')).toMatchObject({ requiredPermission: 'command:execute' });
  });

  it('notification.send uses the channels of the factory', async () => {
    const r = await app.get(SkillDispatcher).dispatch(
      createSkillContext({
        guard: new Guard({ allow: ['notification.send'] }),
        tenantId: 'acme',
        userId: 'u1',
        permissions: [],
        runId: 'n-1',
      }),
      'notification.send',
      { channel: 'desk', message: 'hello' },
    );
    expect(r.value).toEqual({ channel: 'desk', delivered: true });
    expect(app.get(AppConfig).sunk).toEqual([expect.objectContaining({ channel: 'desk', message: 'hello', tenantId: 'acme' })]);
  });
});

describe('OutboxModule at shutdown', () => {
  let db: TestDatabase;
  afterAll(async () => {
    await db?.drop();
  });

  it('lets a delivery in flight settle before the database closes: the event ends delivered, not stuck delivering', async () => {
    db = await createTestDatabase();
    let started!: () => void;
    const handlerStarted = new Promise<void>((resolve) => (started = resolve));
    const app = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot(await db.options({ migrations: ZMODU_OUTBOX_MIGRATIONS, migrationsRun: true })),
        GuardModule.forRoot({ auditStore: 'memory', quotaStore: 'memory' }),
        SkillsModule.forRoot(),
        OutboxModule.forRoot({
          relay: { pollIntervalMs: 20 },
          handlers: {
            'slow.done': async () => {
              started();
              await new Promise((r) => setTimeout(r, 300));
            },
          },
        }),
      ],
    }).compile();
    await app.init();
    const id = await app.get(OutboxService).publish({ tenantId: 'acme', topic: 'slow.done', payload: {} });
    await handlerStarted;
    await app.close(); // while the handler still runs
    const check = new DataSource(await db.options());
    await check.initialize();
    try {
      const [row] = await check.query(`SELECT status, attempts FROM zmodu_outbox WHERE id = $1`, [id]);
      expect(row).toEqual({ status: 'delivered', attempts: 1 });
    } finally {
      await check.destroy();
    }
  });

  it('waits for a runOnce pass under way (a relay run by hand, autoStart false): its delivery settles before the database closes', async () => {
    db ??= await createTestDatabase();
    let started!: () => void;
    const handlerStarted = new Promise<void>((resolve) => (started = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const app = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot(await db.options({ migrations: ZMODU_OUTBOX_MIGRATIONS, migrationsRun: true })),
        GuardModule.forRoot({ auditStore: 'memory', quotaStore: 'memory' }),
        SkillsModule.forRoot(),
        OutboxModule.forRoot({
          relay: { autoStart: false },
          handlers: {
            'by.hand': async () => {
              started();
              await released;
            },
          },
        }),
      ],
    }).compile();
    await app.init();
    const relay = app.get(OutboxRelay);
    const id = await app.get(OutboxService).publish({ tenantId: 'acme', topic: 'by.hand', payload: {} });
    const pass = relay.runOnce();
    await handlerStarted;
    // The handler ends once the shutdown has begun (the relay's stop is under way); the pass must settle before the close.
    const stop = relay.stop.bind(relay);
    let passDoneAtStop: boolean | undefined;
    let passDone = false;
    void pass.finally(() => (passDone = true)).catch(() => undefined);
    relay.stop = async () => {
      const stopping = stop();
      release();
      await stopping;
      passDoneAtStop = passDone;
    };
    await app.close();
    expect(passDoneAtStop).toBe(true);
    expect(await pass).toMatchObject({ claimed: 1, delivered: 1 });
    const check = new DataSource(await db.options());
    await check.initialize();
    try {
      const [row] = await check.query(`SELECT status, attempts FROM zmodu_outbox WHERE id = $1`, [id]);
      expect(row).toEqual({ status: 'delivered', attempts: 1 });
    } finally {
      await check.destroy();
    }
  });
});
