import { request as httpRequest } from 'node:http';
import { AddressInfo } from 'node:net';
import { Controller, Get, INestApplication, Query } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ClientAbortSignal, CLIENT_GONE_MESSAGE } from './client-abort';

/** What the handlers saw of their signals. */
const seen = new Map<string, { aborted: boolean; reason?: string }>();

@Controller()
class RunsController {
  /** Waits until its signal aborts, or `ms` (an answer in time). */
  @Get('wait')
  async wait(@Query('id') id: string, @Query('ms') ms: string, @ClientAbortSignal() signal: AbortSignal) {
    seen.set(id, { aborted: false });
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, Number(ms));
      signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
    });
    seen.set(id, { aborted: signal.aborted, reason: (signal.reason as Error | undefined)?.message });
    // Kept to see whether the signal aborts after the answer was sent (it must not).
    setTimeout(() => seen.set(`${id}:later`, { aborted: signal.aborted }), 100);
    return { ok: true };
  }
}

describe('ClientAbortSignal (a real HTTP server and client)', () => {
  let app: INestApplication;
  let port: number;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ controllers: [RunsController] }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    port = (app.getHttpServer().address() as AddressInfo).port;
  });

  afterAll(async () => {
    await app?.close();
  });

  const until = async (condition: () => boolean) => {
    for (const end = Date.now() + 5000; !condition() && Date.now() < end;) await new Promise((r) => setTimeout(r, 20));
    return condition();
  };

  it('aborts when the client hangs up before the answer, with a reason that says so (attack: a caller leaves, its work goes on)', async () => {
    const req = httpRequest({ host: '127.0.0.1', port, path: '/wait?id=gone&ms=60000' });
    req.on('error', () => undefined);
    req.end();
    expect(await until(() => seen.has('gone'))).toBe(true);
    req.destroy();
    expect(await until(() => seen.get('gone')?.aborted === true)).toBe(true);
    expect(seen.get('gone')?.reason).toBe(CLIENT_GONE_MESSAGE);
  });

  it('never aborts for a client that got its whole answer', async () => {
    const body = await new Promise<string>((resolve, reject) =>
      httpRequest({ host: '127.0.0.1', port, path: '/wait?id=stayed&ms=10' }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve(text));
      })
        .on('error', reject)
        .end(),
    );
    expect(JSON.parse(body)).toEqual({ ok: true });
    expect(await until(() => seen.has('stayed:later'))).toBe(true);
    expect(seen.get('stayed')).toEqual({ aborted: false });
    expect(seen.get('stayed:later')).toEqual({ aborted: false });
  });
});
