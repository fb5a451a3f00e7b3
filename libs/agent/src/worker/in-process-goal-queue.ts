import { GoalQueue, PushOptions, settledWithin } from './worker.ports';

/**
 * The in-process GoalQueue: run ids wait in an array; `concurrency` slots take them in order. Runs pushed `first` (taken
 * back from an instance that died or stopped) go before every goal waiting without it, in the order they came.
 */
export class InProcessGoalQueue implements GoalQueue {
  private readonly waiting: string[] = [];
  /** Ids waiting or being handled: an id pushed twice is handled once. */
  private readonly known = new Set<string>();
  private readonly active = new Set<Promise<void>>();
  private handle?: (runId: string) => Promise<void>;
  private concurrency = 1;
  private accepting = false;

  async start(handle: (runId: string) => Promise<void>, concurrency: number): Promise<void> {
    this.handle = handle;
    this.concurrency = concurrency;
    this.accepting = true;
    this.pump();
  }

  /** Runs pushed `first` at the head of `waiting` (they are its first `firsts` ids). */
  private firsts = 0;

  async push(runIds: readonly string[], options: PushOptions = {}): Promise<void> {
    if (!this.accepting) return;
    for (const id of runIds) {
      if (this.known.has(id)) {
        // Waiting behind newer goals already (pushed before it was taken back): move it up.
        const at = options.first ? this.waiting.indexOf(id) : -1;
        if (at < this.firsts) continue;
        this.waiting.splice(at, 1);
      } else this.known.add(id);
      if (options.first) this.waiting.splice(this.firsts++, 0, id);
      else this.waiting.push(id);
    }
    this.pump();
  }

  /** Goals waiting for a slot. */
  get size(): number {
    return this.waiting.length;
  }

  /** Goals being handled now. */
  get running(): number {
    return this.active.size;
  }

  async stop(graceMs: number): Promise<void> {
    this.accepting = false;
    for (const id of this.waiting.splice(0)) this.known.delete(id);
    this.firsts = 0;
    await settledWithin(this.active, graceMs);
  }

  private pump(): void {
    while (this.accepting && this.handle && this.active.size < this.concurrency && this.waiting.length) {
      const id = this.waiting.shift() as string;
      if (this.firsts) this.firsts--;
      const handle = this.handle;
      const job: Promise<void> = Promise.resolve()
        .then(() => handle(id))
        .catch(() => undefined)
        .finally(() => {
          this.active.delete(job);
          this.known.delete(id);
          this.pump();
        });
      this.active.add(job);
    }
  }
}
