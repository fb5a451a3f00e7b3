import { Logger } from '@nestjs/common';
import { AuditEntry, AuditQuery, AuditRecord } from './audit-entry';
import { AuditLogStore } from './audit-log.store';

export interface AuditBatchOptions {
  /** Flush when this many entries are waiting. Default 100. */
  readonly batchSize?: number;
  /** Flush at least this often (ms). Default 1000. */
  readonly flushIntervalMs?: number;
  /** Entries kept while the store is failing before the oldest are dropped (and counted). Default 100000. */
  readonly maxBuffered?: number;
}

/**
 * The audit trail of every dispatch. `record` only queues (off the hot path); entries
 * reach the store in batches, on a timer, on `flush()`, before any `query()`, and at shutdown.
 * A batch the store refuses stays queued and is tried again.
 */
export class AgentAuditLog {
  private readonly logger = new Logger('AgentAuditLog');
  private buffer: AuditEntry[] = [];
  private flushing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly batchSize: number;
  private readonly flushIntervalMs: number;
  private readonly maxBuffered: number;
  private droppedCount = 0;
  private closed = false;

  constructor(
    private readonly store: AuditLogStore,
    options: AuditBatchOptions = {},
  ) {
    this.batchSize = Math.max(1, options.batchSize ?? 100);
    this.flushIntervalMs = Math.max(1, options.flushIntervalMs ?? 1000);
    this.maxBuffered = Math.max(this.batchSize, options.maxBuffered ?? 100_000);
  }

  record(entry: AuditEntry): void {
    this.buffer.push(entry);
    if (this.buffer.length > this.maxBuffered) {
      const excess = this.buffer.length - this.maxBuffered;
      this.buffer.splice(0, excess);
      this.droppedCount += excess;
      this.logger.error(`audit store is failing: dropped ${excess} oldest entries (${this.droppedCount} in all)`);
    }
    if (this.buffer.length >= this.batchSize) void this.flush().catch(() => undefined);
    else this.arm();
  }

  /** Write everything queued so far. Rejects if the store fails (the entries stay queued). */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing.catch(() => undefined);
    if (this.buffer.length === 0) return;
    const batch = this.buffer;
    this.buffer = [];
    this.flushing = this.store.append(batch).then(
      () => undefined,
      (err: unknown) => {
        this.buffer = batch.concat(this.buffer);
        this.logger.warn(`audit flush of ${batch.length} entries failed, will retry: ${String(err)}`);
        if (!this.closed) this.arm();
        throw err;
      },
    );
    try {
      await this.flushing;
    } finally {
      this.flushing = null;
    }
    if (this.buffer.length > 0) await this.flush();
  }

  async query(filter: AuditQuery): Promise<AuditRecord[]> {
    await this.flush();
    return this.store.query(filter);
  }

  get pending(): number {
    return this.buffer.length;
  }

  get dropped(): number {
    return this.droppedCount;
  }

  /** Flush and stop the timer. Called by the module at shutdown. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.flush();
  }

  private arm(): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.flush().catch(() => undefined);
    }, this.flushIntervalMs);
    this.timer.unref();
  }
}
