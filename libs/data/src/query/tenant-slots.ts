import { SkillError } from '@zmodu/skills';

interface Waiter {
  readonly grant: () => void;
  readonly fail: (err: Error) => void;
}

/**
 * How many data statements each tenant runs at once in this process: at most `limit`; a call
 * past it waits in its tenant's own line (first come, first served) for at most `waitMs`, then is
 * refused (`tenant_busy`). Another tenant never waits in that line. A slot is held until the
 * statement has ended (answered, cancelled on the server, or its connection closed), not until
 * its caller stopped waiting for it. Check and take are one synchronous step: no caller slips in
 * between. (On a server the same share is also held in the database, across instances: see
 * TAKE_SLOT_SQL.)
 */
export class TenantSlots {
  private readonly held = new Map<string, number>();
  private readonly lines = new Map<string, Waiter[]>();

  constructor(
    readonly limit: number,
    private readonly waitMs: number,
  ) {}

  /** Run `work` in one of the tenant's slots. */
  async run<T>(tenant: string, signal: AbortSignal | undefined, work: () => Promise<T>): Promise<T> {
    await this.take(tenant, signal);
    try {
      return await work();
    } finally {
      this.give(tenant);
    }
  }

  /** Statements the tenant runs now (for tests and metrics). */
  running(tenant: string): number {
    return this.held.get(tenant) ?? 0;
  }

  /** Calls of the tenant waiting for one of its slots. */
  waiting(tenant: string): number {
    return this.lines.get(tenant)?.length ?? 0;
  }

  private take(tenant: string, signal: AbortSignal | undefined): Promise<void> {
    const n = this.held.get(tenant) ?? 0;
    if (n < this.limit && !this.lines.get(tenant)?.length) {
      this.held.set(tenant, n + 1);
      return Promise.resolve();
    }
    if (signal?.aborted) return Promise.reject(cancelledWhileWaiting());
    return new Promise<void>((resolve, reject) => {
      const line = this.lines.get(tenant) ?? [];
      this.lines.set(tenant, line);
      const leave = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const i = line.indexOf(waiter);
        if (i >= 0) line.splice(i, 1);
        if (!line.length) this.lines.delete(tenant);
      };
      const waiter: Waiter = {
        // give() counted the slot for this waiter already.
        grant: () => {
          leave();
          resolve();
        },
        fail: (err) => {
          leave();
          reject(err);
        },
      };
      const timer = setTimeout(() => waiter.fail(busy(this.limit, this.waitMs)), this.waitMs);
      const onAbort = () => waiter.fail(cancelledWhileWaiting());
      signal?.addEventListener('abort', onAbort, { once: true });
      line.push(waiter);
    });
  }

  /** A slot freed: straight to the first in line (it keeps the count), else given back. */
  private give(tenant: string): void {
    const next = this.lines.get(tenant)?.[0];
    if (next) return next.grant();
    const n = (this.held.get(tenant) ?? 1) - 1;
    if (n > 0) this.held.set(tenant, n);
    else this.held.delete(tenant);
  }
}

/** The refusal when a tenant's statements hold every slot (here past the wait, or in the database on another instance). */
export function busy(limit: number, waitMs?: number): SkillError {
  return new SkillError(
    'tenant_busy',
    `Your tenant already runs ${limit} data statement(s) at once${waitMs !== undefined ? ` and none ended within ${waitMs} ms` : ''}: ` +
      'wait for one to finish, then retry (run fewer at once, or lighter ones).',
    { retryable: true, limit },
    'QueryRefused',
  );
}

function cancelledWhileWaiting(): SkillError {
  return new SkillError(
    'cancelled',
    'The call was cancelled while it waited for a slot of its tenant; nothing ran.',
    undefined,
    'Cancelled',
  );
}
