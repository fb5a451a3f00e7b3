import { withRetries } from './retry';

/** What a BufferedFlusher flushes: the owner keeps the buffer (its shape, its bound), the flusher decides when it is written. */
export interface BufferedFlusherOptions {
  /** The wait of the timer (`arm`), and the first wait between tries while the store fails (ms). */
  readonly intervalMs: number;
  /** The longest wait between tries while the store fails (ms). */
  readonly maxIntervalMs: number;
  /** Flushes close() tries while the store fails. */
  readonly closeAttempts: number;
  /** Whether anything waits to be written. */
  hasPending(): boolean;
  /** Write what waits; rejects when the store fails, what was not written kept. */
  drain(): Promise<void>;
  /** A drain failed: the wait before the next try is now `retryInMs` (e.g. to log it). */
  failed?(err: unknown, retryInMs: number): void;
  /** close() gave up: drop what still waits (count it, log it); `err` is the last failure. */
  dropPending(err: unknown): void;
}

/**
 * @internal How a buffer reaches a store that may fail: the audit log's entries and the token quota's charges.
 * One flush at a time, on demand (`flush`) or on a timer (`arm`, unref'd); while the store fails, the wait before the
 * next try doubles from intervalMs to maxIntervalMs, and goes back to intervalMs after a flush that succeeds. `close()`
 * stops the timer and flushes `closeAttempts` times at most (waiting min(intervalMs, 1 s) and doubling); if the store
 * still fails, the owner drops what is left (`dropPending`) and close() rejects with the last error.
 */
export class BufferedFlusher {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private closed = false;
  private interval: number;

  constructor(private readonly options: BufferedFlusherOptions) {
    this.interval = options.intervalMs;
  }

  /** The wait before the next try: intervalMs, or more while the store fails. */
  get retryInMs(): number {
    return this.interval;
  }

  /** Whether the last flush failed (the waits are longer than intervalMs until one succeeds). */
  get backingOff(): boolean {
    return this.interval !== this.options.intervalMs;
  }

  /** Whether a drain is under way. */
  get flushing(): boolean {
    return this.running !== null;
  }

  /** Write what waits, after any flush under way; rejects if the store fails (the owner keeps what was not written). */
  async flush(): Promise<void> {
    while (this.running) await this.running.catch(() => undefined);
    if (!this.options.hasPending()) return;
    const run = this.drain();
    this.running = run;
    try {
      await run;
    } finally {
      this.running = null;
    }
  }

  /** Flush after the current wait, unless a flush is already due or the flusher is closed. */
  arm(): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.flush().catch(() => undefined);
    }, this.interval);
    this.timer.unref();
  }

  /** Stop the timer and flush, `closeAttempts` times at most; then drop what is left and reject with the last error. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    try {
      await withRetries(() => this.flush(), {
        attempts: this.options.closeAttempts,
        firstDelayMs: Math.min(this.options.intervalMs, 1000),
        maxDelayMs: this.options.maxIntervalMs,
      });
    } catch (err) {
      this.options.dropPending(err);
      throw err;
    }
  }

  private async drain(): Promise<void> {
    try {
      await this.options.drain();
    } catch (err) {
      this.interval = Math.min(this.interval * 2, this.options.maxIntervalMs);
      this.options.failed?.(err, this.interval);
      this.arm();
      throw err;
    }
    this.interval = this.options.intervalMs;
  }
}
