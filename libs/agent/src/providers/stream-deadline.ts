/**
 * The signal of one streamed model request: the run's abort, or a stream that goes quiet for `idleMs`.
 * The SDKs' own timeout covers only the wait for the response headers, and they end an aborted stream
 * quietly; `finish` turns both into errors, so a cut-off stream never passes for a complete turn.
 */
export class StreamDeadline {
  readonly signal: AbortSignal;
  private readonly idle = new AbortController();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly provider: string,
    private readonly run: AbortSignal,
    private readonly idleMs: number,
  ) {
    this.signal = AbortSignal.any([run, this.idle.signal]);
  }

  /** A chunk arrived (or the stream opened): the idle clock starts again. */
  touch(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.idle.abort(), this.idleMs);
  }

  /** Stops the clock; throws when the stream was cut off, or ended before the turn was complete. */
  finish(complete: boolean, error?: unknown): void {
    clearTimeout(this.timer);
    if (this.run.aborted) throw new Error(`${this.provider}: the request was aborted (the run was aborted).`);
    if (this.idle.signal.aborted)
      throw new Error(`${this.provider}: the model stream sent nothing for ${this.idleMs} ms and was cut off (timeoutMs).`);
    if (error !== undefined) throw error;
    if (!complete) throw new Error(`${this.provider}: the model stream ended before the turn was complete.`);
  }
}
