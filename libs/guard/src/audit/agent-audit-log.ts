import { Logger } from '@nestjs/common';
import type { RuntimeEvents } from '../events/runtime-events';
import { BufferedFlusher } from '../buffered-flusher';
import { AuditEntry, AuditQuery, AuditRecord, cleanAuditEntry } from './audit-entry';
import { AuditLogStore, AuditTransaction } from './audit-log.store';

/** How long after the last intent was written the flushes keep looking for intents (its transaction may commit late). */
const INTENT_GRACE_MS = 60_000;

export interface AuditBatchOptions {
  /** Flush when this many entries are waiting; also the size of one write. Default 100. */
  readonly batchSize?: number;
  /** Flush at least this often (ms). Default 1000. */
  readonly flushIntervalMs?: number;
  /** Entries kept while the store is failing; past it the oldest are dropped, counted and logged. Default 100000. */
  readonly maxBuffered?: number;
  /** Longest wait between retries while the store is failing (ms; the wait doubles from flushIntervalMs). Default 30000. */
  readonly maxRetryIntervalMs?: number;
  /** Attempts of the last flush at shutdown while the store is failing. Default 3. */
  readonly closeAttempts?: number;
}

/** Counters of the audit writer. */
export interface AuditLogMetrics {
  /** Entries waiting for the store. */
  readonly pending: number;
  /** Entries written. */
  readonly written: number;
  /** Entries whose text held NUL or lone surrogates, written with U+FFFD in their place. */
  readonly sanitized: number;
  /** Entries the store said were invalid on their own (`refusesEntry`): set aside (dead letters), not written to the log. */
  readonly deadLettered: number;
  /** Entries dropped because the buffer overflowed while the store was failing (oldest first), or still unwritten at the end of close(). */
  readonly dropped: number;
  /** Failed writes (whole batches or parts of a split batch). */
  readonly failedWrites: number;
  /** The wait before the next retry while the store is failing (ms); flushIntervalMs when it is not. */
  readonly retryInMs: number;
}

/**
 * The audit trail of every dispatch. `record` only queues (off the hot path), after cleaning
 * the text fields of NUL and lone surrogates; entries reach the store in batches, on a timer,
 * on `flush()`, before any `query()`, and at shutdown.
 *
 * An entry is set aside only when the store says it is invalid on its own (`store.refusesEntry(err)`: PostgreSQL refused
 * a value it holds): such a batch is split in halves until the entry at fault is alone; tried once more alone, that
 * entry is then set aside (`store.setAside`, counted in `deadLettered`, logged) and the others are written, so one
 * poisoned entry cannot block the trail. Any other failure (a lock timeout, a trigger, a full disk, an outage: the store
 * failing while its reads may still answer), or a set-aside that fails, keeps everything queued, in order, retried with
 * backoff (doubling from flushIntervalMs to maxRetryIntervalMs), until the store takes it: each entry arrives once. The
 * buffer is bounded (`maxBuffered`): past it the oldest entries are dropped, counted and logged.
 */
export class AgentAuditLog {
  private readonly logger = new Logger('AgentAuditLog');
  private buffer: AuditEntry[] = [];
  private readonly flusher: BufferedFlusher;
  private readonly batchSize: number;
  private readonly flushIntervalMs: number;
  private readonly maxBuffered: number;
  private readonly maxRetryIntervalMs: number;
  private droppedCount = 0;
  private writtenCount = 0;
  private sanitizedCount = 0;
  private deadLetteredCount = 0;
  private failedWriteCount = 0;
  /** Entries taken out of the buffer by the write under way. */
  private inFlight = 0;
  /** Intents may wait in the store: written lately, or left by a process that died (checked at the first flush). */
  private intentsWaiting: boolean;
  private lastIntentAt = 0;
  private intentRetryAt = 0;
  private intentRetryMs: number;

  constructor(
    private readonly store: AuditLogStore,
    options: AuditBatchOptions = {},
    /** Told of every entry recorded (a `tool_call` event), e.g. for metrics. */
    private readonly events?: RuntimeEvents,
  ) {
    this.batchSize = Math.max(1, options.batchSize ?? 100);
    this.flushIntervalMs = Math.max(1, options.flushIntervalMs ?? 1000);
    this.maxBuffered = Math.max(this.batchSize, options.maxBuffered ?? 100_000);
    this.maxRetryIntervalMs = Math.max(this.flushIntervalMs, options.maxRetryIntervalMs ?? 30_000);
    this.intentRetryMs = this.flushIntervalMs;
    this.intentsWaiting = typeof store.moveIntents === 'function';
    this.flusher = new BufferedFlusher({
      intervalMs: this.flushIntervalMs,
      maxIntervalMs: this.maxRetryIntervalMs,
      closeAttempts: Math.max(1, options.closeAttempts ?? 3),
      hasPending: () => this.buffer.length > 0 || this.intentsWaiting,
      drain: () => this.drain(),
      failed: (err, retryInMs) =>
        this.logger.warn(`audit store is failing, ${this.buffer.length} entries queued, retry in ${retryInMs} ms: ${String(err)}`),
      dropPending: (err) => {
        const lost = this.buffer.length;
        this.droppedCount += lost;
        this.buffer = [];
        this.logger.error(
          `audit store still failing at shutdown: ${lost} entries not written (${this.droppedCount} dropped in all): ${String(err)}`,
        );
      },
    });
    if (this.intentsWaiting) this.flusher.arm(); // intents a process that died left: chained soon after the start
  }

  record(raw: AuditEntry): void {
    const entry = this.clean(raw);
    this.buffer.push(entry);
    this.events?.emit({ type: 'tool_call', entry });
    this.trim();
    if (this.buffer.length >= this.batchSize && !this.flusher.backingOff) void this.flush().catch(() => undefined);
    else this.flusher.arm();
  }

  /**
   * Record the entry of a call whose effect commits in `transaction` (a staged execution): with a store that keeps
   * intents, the entry is written in that transaction, so it commits with the effect or not at all, and a process that
   * dies right after the commit loses nothing; the next flush (of this instance, or at any instance's start) chains it.
   * Without such a store it is recorded as usual. Rejects when the write fails (the caller's transaction then fails too).
   */
  async recordWithin(transaction: AuditTransaction, raw: AuditEntry): Promise<void> {
    if (!this.store.writeIntent) return this.record(raw);
    const entry = this.clean(raw);
    await this.store.writeIntent(transaction, entry);
    this.events?.emit({ type: 'tool_call', entry });
    this.intentsWaiting = true;
    this.lastIntentAt = Date.now();
    this.flusher.arm();
  }

  private clean(raw: AuditEntry): AuditEntry {
    const { entry, cleaned } = cleanAuditEntry(raw);
    if (cleaned) {
      this.sanitizedCount++;
      this.logger.warn(`audit entry of run ${JSON.stringify(entry.runId)} held NUL or lone surrogates: replaced by U+FFFD`);
    }
    return entry;
  }

  /**
   * Write everything queued so far, in batches of `batchSize`, setting aside entries the store
   * refuses on their own, and chain the committed intents. Rejects if the store is down (the unwritten
   * entries stay queued, in order; intents stay in the store).
   */
  flush(): Promise<void> {
    return this.flusher.flush();
  }

  async query(filter: AuditQuery): Promise<AuditRecord[]> {
    await this.flush();
    return this.store.query(filter);
  }

  get pending(): number {
    return this.buffer.length + this.inFlight;
  }

  get dropped(): number {
    return this.droppedCount;
  }

  get deadLettered(): number {
    return this.deadLetteredCount;
  }

  get sanitized(): number {
    return this.sanitizedCount;
  }

  metrics(): AuditLogMetrics {
    return {
      pending: this.pending,
      written: this.writtenCount,
      sanitized: this.sanitizedCount,
      deadLettered: this.deadLetteredCount,
      dropped: this.droppedCount,
      failedWrites: this.failedWriteCount,
      retryInMs: this.flusher.retryInMs,
    };
  }

  /**
   * Flush and stop the timer. Called by the module at shutdown. While the store is down it tries
   * `closeAttempts` times (with backoff); entries still unwritten then are counted as dropped and
   * logged, then the last error is thrown.
   */
  close(): Promise<void> {
    return this.flusher.close();
  }

  private async drain(): Promise<void> {
    if (this.intentsWaiting && this.store.moveIntents) {
      // Committed intents first (their calls happened first). An intent whose transaction has not committed yet is moved
      // by a later flush: the flushes go on while intents move, and for INTENT_GRACE_MS after the last one was written.
      let moved = 0;
      if (Date.now() < this.intentRetryAt) moved = 1;
      else
        try {
          for (let n = this.batchSize; n === this.batchSize; moved += n) n = await this.store.moveIntents(this.batchSize);
          this.intentRetryMs = this.flushIntervalMs;
        } catch (err) {
          // Kept in the store: tried again after a wait that doubles; the queued entries below are written meanwhile.
          this.intentRetryAt = Date.now() + this.intentRetryMs;
          this.logger.warn(`audit intents not chained yet (kept in the store; tried again in ${this.intentRetryMs} ms): ${String(err)}`);
          this.intentRetryMs = Math.min(this.intentRetryMs * 2, this.maxRetryIntervalMs);
          moved = 1;
        }
      this.intentsWaiting = moved > 0 || Date.now() - this.lastIntentAt < INTENT_GRACE_MS;
      if (this.intentsWaiting) this.flusher.arm();
    }
    while (this.buffer.length > 0) {
      const batch = this.buffer.splice(0, this.batchSize);
      this.inFlight = batch.length;
      let result: { done: number; error?: unknown };
      try {
        result = await this.write(batch);
      } finally {
        this.inFlight = 0;
      }
      const { done, error } = result;
      if (done < batch.length) {
        // Back at the front, in order, ahead of what was recorded meanwhile; still bounded. The flusher backs off
        // (the wait doubles, logged by `failed`) and tries again.
        this.buffer = batch.slice(done).concat(this.buffer);
        this.trim();
        throw error;
      }
    }
  }

  /** Past maxBuffered, drop the oldest entries, count and log them. */
  private trim(): void {
    if (this.buffer.length <= this.maxBuffered) return;
    const excess = this.buffer.length - this.maxBuffered;
    this.buffer.splice(0, excess);
    this.droppedCount += excess;
    this.logger.error(`audit store is failing: dropped ${excess} oldest entries (${this.droppedCount} in all)`);
  }

  /** Whether the store says that `err` of an append means an entry of the batch is invalid on its own. */
  private refused(err: unknown): boolean {
    try {
      return this.store.refusesEntry?.(err) === true;
    } catch {
      return false;
    }
  }

  /**
   * Write `batch`; when the store refuses an entry of it as invalid, split it to find that entry. Returns how many
   * entries, from the start, are handled (written or set aside); a write that failed otherwise handles none.
   */
  private async write(batch: readonly AuditEntry[]): Promise<{ done: number; error?: unknown }> {
    try {
      await this.store.append(batch);
      this.writtenCount += batch.length;
      return { done: batch.length };
    } catch (err) {
      this.failedWriteCount++;
      // The store is failing, not the entries: nothing is set aside, the batch stays queued and is retried.
      if (!this.refused(err)) return { done: 0, error: err };
      if (batch.length === 1) {
        // Once more alone, so that a blip of the store does not send a good entry to the dead letters.
        try {
          await this.store.append(batch);
          this.writtenCount++;
          return { done: 1 };
        } catch (again) {
          this.failedWriteCount++;
          if (!this.refused(again)) return { done: 0, error: again };
          return (await this.setAside(batch[0], again)) ? { done: 1 } : { done: 0, error: again };
        }
      }
      const mid = Math.ceil(batch.length / 2);
      const left = await this.write(batch.slice(0, mid));
      if (left.done < mid) return left;
      const right = await this.write(batch.slice(mid));
      return { done: mid + right.done, error: right.error };
    }
  }

  /** Set aside one entry the store refused as invalid, if the store shows it is up. False: the store is down. */
  private async setAside(entry: AuditEntry, err: unknown): Promise<boolean> {
    const error = (err as Error)?.message ?? String(err);
    try {
      if (this.store.setAside) await this.store.setAside([{ entry, error, at: new Date() }]);
      else await this.store.query({ limit: 1 });
    } catch {
      return false;
    }
    this.deadLetteredCount++;
    this.logger.error(
      `audit store refused one entry on its own; set aside (${this.deadLetteredCount} in all)${this.store.setAside ? '' : `: ${JSON.stringify(entry)}`}: ${error}`,
    );
    return true;
  }
}
