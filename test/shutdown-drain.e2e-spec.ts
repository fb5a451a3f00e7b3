import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Controller, Injectable, Module, OnApplicationShutdown, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { drainOnSignal } from '../apps/sample/src/shutdown';

let release: () => void = () => undefined;
const events: string[] = [];

@Controller()
class SlowController {
  @Post('slow')
  async slow(): Promise<{ ok: true }> {
    events.push('handler started');
    await new Promise<void>((r) => (release = r));
    events.push('handler finished');
    return { ok: true };
  }
}

@Injectable()
class Hooks implements OnApplicationShutdown {
  onApplicationShutdown(): void {
    events.push('app closed');
  }
}

@Module({ controllers: [SlowController], providers: [Hooks] })
class SlowModule {}

/**
 * The sample's drain on SIGTERM waits for the handlers still running, also those whose client went away: their
 * connection is closed, but the handler goes on using the database, which app.close() ends. Found by the load run
 * (npm run load): at the end of each run, `PGlite pool has ended` in the handlers autocannon had left running.
 */
describe('drainOnSignal: a request whose client went away', () => {
  it('closes the application only after its handler has finished', async () => {
    const app = await NestFactory.create(SlowModule, { logger: false });
    const exited = new Promise<number>((resolve) => drainOnSignal(app, { drainMs: 5000, exit: resolve }));
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as AddressInfo;
    try {
      const socket = connect(port, '127.0.0.1');
      socket.write('POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n');
      while (!events.includes('handler started')) await new Promise((r) => setTimeout(r, 10));
      socket.destroy(); // the client goes away; its handler still runs
      await new Promise((r) => setTimeout(r, 50));
      process.emit('SIGTERM', 'SIGTERM');
      await new Promise((r) => setTimeout(r, 300));
      expect(events).toEqual(['handler started']);
      release();
      expect(await exited).toBe(0);
      expect(events).toEqual(['handler started', 'handler finished', 'app closed']);
    } finally {
      release();
    }
  });
});
