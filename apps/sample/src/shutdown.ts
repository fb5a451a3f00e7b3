import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { INestApplication, Logger } from '@nestjs/common';

export interface DrainOptions {
  /** How long requests in flight may take to finish before their connections are closed. Default 10000 ms (under the usual 30 s grace). */
  readonly drainMs?: number;
  /** Called when the process may exit (default: process.exit(0)). */
  readonly exit?: (code: number) => void;
}

/**
 * A shutdown that finishes under keep-alive load. On SIGTERM (or SIGINT): stop accepting
 * connections; answer every request still arriving on a kept-alive connection with
 * `Connection: close` and close each idle connection; after `drainMs`, close what is left. Only
 * then close the application, whose shutdown hooks flush the audit log and the quota charges:
 * nothing is answered after the flush, so no answered call's audit entry is lost.
 * Call it before `listen` (it adds the `Connection: close` middleware).
 */
export function drainOnSignal(app: INestApplication, options: DrainOptions = {}): void {
  const logger = new Logger('Shutdown');
  const drainMs = options.drainMs ?? 10_000;
  let draining = false;
  type Res = {
    headersSent: boolean;
    setHeader(n: string, v: string): void;
    on(e: string, f: () => void): void;
    end: (...args: unknown[]) => unknown;
  };
  const inFlight = new Map<Res, Socket>();
  // Requests whose handler has not answered yet, even when their client went away (the handler still uses the database).
  const running = new Set<Res>();
  app.use((req: { socket: Socket }, res: Res, next: () => void) => {
    // Answers while draining say Connection: close: Node ends the connection after them, and the
    // client opens no further request on it (closing the socket ourselves would race its next request).
    if (draining) res.setHeader('Connection', 'close');
    inFlight.set(res, req.socket);
    running.add(res);
    res.on('finish', () => inFlight.delete(res));
    res.on('close', () => inFlight.delete(res));
    const end = res.end;
    res.end = function (this: unknown, ...args: unknown[]) {
      running.delete(res);
      return end.apply(this, args);
    };
    next();
  });
  const onSignal = (signal: NodeJS.Signals) => {
    if (draining) return;
    draining = true;
    logger.log(`${signal}: draining connections (at most ${drainMs} ms), then flushing and closing`);
    const server = app.getHttpServer() as Server;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    // Requests already running answer with Connection: close too; one whose headers are out ends its connection after it.
    for (const [res, socket] of inFlight) {
      if (!res.headersSent) res.setHeader('Connection', 'close');
      else res.on('finish', () => socket.end());
    }
    server.closeIdleConnections();
    const force = setTimeout(() => {
      logger.warn(`drain time over: closing the connections of ${inFlight.size} requests still running`);
      server.closeAllConnections();
    }, drainMs);
    force.unref();
    const deadline = Date.now() + drainMs;
    void closed
      .then(() => clearTimeout(force))
      .then(async () => {
        // A closed connection is not a finished handler: wait for those still answering (within the drain time).
        while (running.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        if (running.size > 0) logger.warn(`drain time over: closing with ${running.size} handlers still running`);
      })
      .then(() => app.close())
      .then(
        () => (options.exit ?? process.exit)(0),
        (err: unknown) => {
          logger.error(`shutdown failed: ${String(err)}`);
          (options.exit ?? process.exit)(1);
        },
      );
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
}
