import { createServer, IncomingMessage, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { startOutboxApp } from '../__fixtures__/outbox-app';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import { OutboxRelay } from '../outbox-relay';
import { OutboxService } from '../outbox.service';
import { NotifyModule } from './notify.module';
import { NotificationMessage } from './notify.types';
import { signWebhook } from './webhook-signature';

const SECRET = 'webhook-secret-for-tests-0123456789';

interface Received {
  headers: IncomingMessage['headers'];
  body: string;
}

describe('notification.send', () => {
  let db: TestDatabase;
  let t: Awaited<ReturnType<typeof startOutboxApp>>;
  let server: Server;
  const received: Received[] = [];
  const answers: number[] = [];
  const sunk: NotificationMessage[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push({ headers: req.headers, body });
        const status = answers.shift() ?? 200;
        if (status === 0) return; // never answer: the attempt times out
        res.writeHead(status).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    db = await createTestDatabase();
    t = await startOutboxApp(db, { relay: { autoStart: false, backoff: { baseMs: 1, maxMs: 1 } } }, [
      NotifyModule.forRoot({
        channels: {
          // A receiver that answers has 10 s (a loaded machine must not time out a POST that was answered); the slow
          // channel's attempts end at 1.5 s, which only a receiver that never answers reaches.
          ops: { type: 'webhook', url, secret: SECRET, timeoutMs: 10_000 },
          slow: { type: 'webhook', url, secret: SECRET, timeoutMs: 1500 },
          audit: { type: 'sink', handler: (m) => void sunk.push(m) },
          events: { type: 'outbox', topic: 'app.notified' },
        },
      }),
    ]);
  });

  afterAll(async () => {
    await t?.app.close();
    await db?.drop();
    server?.closeAllConnections();
    server?.close();
  });

  const send = (args: unknown) => t.call('notification.send', args, `n-${Math.random()}`, []);
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('a webhook is signed, retried through the outbox after a 500, and delivered once settled', async () => {
    answers.push(500, 200);
    const r = await send({ channel: 'ops', subject: 'disk', message: 'disk almost full', data: { pct: 93 } });
    expect(r.value).toMatchObject({ channel: 'ops', queued: true, eventId: expect.any(String) });
    const eventId = (r.value as { eventId: string }).eventId;
    const relay = t.app.get(OutboxRelay);
    await relay.runOnce();
    await sleep(5);
    await relay.runOnce();
    expect(received).toHaveLength(2);
    for (const req of received) {
      expect(req.headers['x-zmodu-event']).toBe(eventId);
      const expected = signWebhook(SECRET, String(req.headers['x-zmodu-timestamp']), req.body);
      expect(req.headers['x-zmodu-signature']).toBe(expected);
      expect(JSON.parse(req.body)).toMatchObject({ channel: 'ops', tenantId: 'acme', message: 'disk almost full', data: { pct: 93 } });
    }
    expect(signWebhook('wrong-secret-0000000000', String(received[0].headers['x-zmodu-timestamp']), received[0].body)).not.toBe(
      received[0].headers['x-zmodu-signature'],
    );
    expect(await t.app.get(OutboxService).get('acme', eventId)).toMatchObject({ status: 'delivered', attempts: 2 });
  });

  it('a webhook that does not answer in time fails the attempt and is retried', async () => {
    received.length = 0;
    answers.push(0, 204);
    const r = await send({ channel: 'slow', message: 'slow receiver' });
    const eventId = (r.value as { eventId: string }).eventId;
    const relay = t.app.get(OutboxRelay);
    await relay.runOnce();
    expect(await t.app.get(OutboxService).get('acme', eventId)).toMatchObject({
      status: 'pending',
      lastError: expect.stringMatching(/abort|timeout/i),
    });
    await sleep(5);
    await relay.runOnce();
    expect((await t.app.get(OutboxService).get('acme', eventId))?.status).toBe('delivered');
  });

  it('a sink is called in process; an outbox channel writes an event', async () => {
    const s = await send({ channel: 'audit', message: 'hello' });
    expect(s.value).toEqual({ channel: 'audit', delivered: true });
    expect(sunk[0]).toMatchObject({ channel: 'audit', tenantId: 'acme', message: 'hello' });
    const o = await send({ channel: 'events', message: 'an event' });
    const event = await t.app.get(OutboxService).get('acme', (o.value as { eventId: string }).eventId);
    expect(event).toMatchObject({ topic: 'app.notified', payload: { message: 'an event' } });
  });

  it('enforces the channel allowlist', async () => {
    const r = await send({ channel: 'https://evil.example/hook', message: 'x' });
    expect(r.error).toMatchObject({ error: 'InvalidArguments' });
    expect(received.some((q) => q.body.includes('evil'))).toBe(false);
  });
});
