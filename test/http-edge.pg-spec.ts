import { execFileSync } from 'node:child_process';
import { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { serverDataSourceOptions } from '@zmodu/db';
import request from 'supertest';
import { as, plainAppModule } from '../libs/http/src/__fixtures__/plain-app';
import { freePort } from './support/free-port';
import { POSTGRES_SCRIPT } from './support/own-postgres';

/** Polls `condition` every 100 ms for at most `ms`. */
async function until(condition: () => Promise<boolean>, ms = 20_000): Promise<void> {
  for (const end = Date.now() + ms; !(await condition()); await new Promise((r) => setTimeout(r, 100)))
    if (Date.now() > end) throw new Error('the condition did not hold in time');
}

/**
 * A plain Nest application with only the packages (ZmoduHttpModule's filter and runs controller, no code of the
 * sample) on a PostgreSQL server of its own, which the test stops and starts again: while it is away, every route
 * that needs it answers 503 with Retry-After, never a bare 500; once it is back, they answer again.
 */
describe('the HTTP edge of a plain application during a database outage', () => {
  let app: INestApplication;
  let dir: string;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    let url: string;
    [url, dir] = execFileSync(POSTGRES_SCRIPT, ['start', String(await freePort())], { encoding: 'utf8' })
      .trim()
      .split(' ');
    const options = async () => serverDataSourceOptions(url, { extra: { connectionTimeoutMillis: 1000 } });
    const moduleRef = await Test.createTestingModule({ imports: [plainAppModule(options)] }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  }, 120_000);

  afterAll(async () => {
    await app?.close().catch(() => undefined);
    if (dir) execFileSync(POSTGRES_SCRIPT, ['stop', dir]);
  });

  it('answers 503 with Retry-After while the server is stopped, and serves again once it is back', async () => {
    const posted = await http().post('/agents/trader/goals').set(as('acme')).send({ goal: 'What is ACME at?' }).expect(202);
    const read = () => http().get(`/agents/trader/runs/${posted.body.runId}`).set(as('acme'));
    await until(async () => (await read()).body.status === 'succeeded');

    execFileSync(POSTGRES_SCRIPT, ['pause', dir]);
    try {
      const run = await read();
      expect([run.status, run.headers['retry-after'], run.body]).toEqual([
        503,
        '5',
        { statusCode: 503, message: 'The database is unavailable: retry in 5 seconds.', requestId: expect.any(String) },
      ]);
      const live = await http().post('/agents/trader/runs').set(as('acme')).send({ goal: 'What is ACME at?' });
      expect([live.status, live.headers['retry-after'], live.body.message]).toEqual([
        503,
        '5',
        expect.stringMatching(/retry in 5 seconds/),
      ]);
      const goal = await http().post('/agents/trader/goals').set(as('acme')).send({ goal: 'What is ACME at?' });
      expect([goal.status, goal.headers['retry-after']]).toEqual([503, '5']);
      // What needs no database still answers as before.
      expect((await http().post('/agents/nobody/runs').set(as('acme')).send({ goal: 'x' })).status).toBe(404);
      expect((await http().post('/agents/trader/runs').send({ goal: 'x' })).status).toBe(401);
    } finally {
      execFileSync(POSTGRES_SCRIPT, ['resume', dir]);
    }
    await until(async () => (await read()).status === 200);
    const again = await http().post('/agents/trader/runs').set(as('acme')).send({ goal: 'What is ACME at?' });
    expect([again.status, again.body.answer]).toEqual([200, 'ACME is at 101.5.']);
  });
});
