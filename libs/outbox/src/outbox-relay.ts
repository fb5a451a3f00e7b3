import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { DuplicateTopicHandlerException } from './exceptions/duplicate-topic-handler.exception';
import { InvalidRelayOptionsException } from './exceptions/invalid-relay-options.exception';
import { RelayCrash } from './exceptions/relay-crash.exception';
import { RELAY_LEASE_MESSAGE, RELAY_OPTION_MESSAGE } from './outbox.messages';
import { ClaimedEvent, OutboxStore } from './outbox.store';
import { OutboxEvent, OutboxHandler } from './outbox.types';

export { RelayCrash } from './exceptions/relay-crash.exception';

/** What a default lease adds to the handler timeout: room to settle after a handler that ran out its time. */
export const LEASE_MARGIN_MS = 5000;
/** Tries of a delivered event's settlement (about a minute of backoff in all). */
const SETTLE_RETRIES = 12;
const SETTLE_BACKOFF_MAX_MS = 10_000;

export interface RelayOptions {
  /** This relay's name in the lease (default: a random id). */
  readonly owner?: string;
  /** Deliveries in flight at once in this relay. Default 8. */
  readonly concurrency?: number;
  /**
   * Deliveries of one topic in flight at once, so one slow topic or endpoint cannot take every slot. Default half of
   * `concurrency` (at least 1).
   */
  readonly topicConcurrency?: number;
  /** A handler running longer is abandoned and the attempt fails. Default 30000. */
  readonly handlerTimeoutMs?: number;
  /**
   * How long one claim is this relay's: it covers one delivery, is renewed just before the handler
   * runs, and must be longer than `handlerTimeoutMs`. After it, another relay may take the event over.
   * Default handlerTimeoutMs + 5000.
   */
  readonly leaseMs?: number;
  /** Retry delay: baseMs x 2^(attempt-1), at most maxMs. Defaults 1000 and 60000. */
  readonly backoff?: { readonly baseMs?: number; readonly maxMs?: number };
  /** Poll interval of the running relay (a freed slot claims at once, without waiting for it). Default 1000. */
  readonly pollIntervalMs?: number;
  /** Test hooks: throw RelayCrash to simulate the process dying at that point. */
  readonly hooks?: {
    readonly afterClaim?: (event: OutboxEvent) => void | Promise<void>;
    readonly afterDeliver?: (event: OutboxEvent) => void | Promise<void>;
  };
}

export interface RelayPass {
  readonly claimed: number;
  readonly delivered: number;
  readonly failed: number;
  readonly dead: number;
  /** Deliveries skipped (the lease was lost before the handler ran) and settlements refused (a newer claim owns the event). */
  readonly stale: number;
}

type Counts = { -readonly [K in keyof RelayPass]: RelayPass[K] };
/** One pass's (or one running relay's) state: a crash stops every delivery of it from going further. */
interface Life {
  crashed: RelayCrash | null;
}

const positiveInteger = (n: unknown): n is number => Number.isInteger(n) && (n as number) > 0;

/**
 * Delivers outbox events to their handlers at least once, several at a time. Claims are atomic
 * in the store, so several relays share the work; a claim takes a new lease token and a lease of
 * one delivery, renewed under that token just before the handler runs (an event whose lease was
 * lost is skipped). Only the holder of the current lease settles or dead-letters an event; a
 * success reported late still wins over a dead-lettering.
 */
export class OutboxRelay {
  private readonly logger = new Logger('OutboxRelay');
  readonly owner: string;
  readonly concurrency: number;
  readonly topicConcurrency: number;
  readonly handlerTimeoutMs: number;
  readonly leaseMs: number;
  private readonly pollIntervalMs: number;
  private readonly backoffBaseMs: number;
  private readonly backoffMaxMs: number;
  private readonly handlers = new Map<string, OutboxHandler>();
  private inFlight = 0;
  private reserved = 0;
  private readonly busy = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private life: Life = { crashed: null };
  private claiming: Promise<void> | null = null;
  /** The reap of the running relay's current tick (stop waits for it, so it never outlives the database). */
  private reaping: Promise<void> | null = null;
  private claimAgain = false;
  private readonly active = new Set<Promise<void>>();
  /** The runOnce passes under way (stop waits for them, as for the running relay's deliveries). */
  private readonly passes = new Set<Promise<unknown>>();
  /** Handlers abandoned at their deadline that still run, with the settlement of their late success. */
  private readonly abandoned = new Set<Promise<unknown>>();
  /** Raised by stop once it has stopped waiting: a late success of an earlier generation is not settled after it. */
  private generation = 0;
  private readonly totals: Counts = { claimed: 0, delivered: 0, failed: 0, dead: 0, stale: 0 };

  constructor(
    private readonly store: OutboxStore,
    private readonly options: RelayOptions = {},
  ) {
    this.owner = options.owner ?? `relay-${randomUUID().slice(0, 8)}`;
    this.concurrency = options.concurrency ?? 8;
    if (!positiveInteger(this.concurrency))
      throw new InvalidRelayOptionsException(RELAY_OPTION_MESSAGE('concurrency', options.concurrency, 'a positive integer'));
    this.topicConcurrency = options.topicConcurrency ?? Math.max(1, Math.floor(this.concurrency / 2));
    if (!positiveInteger(this.topicConcurrency) || this.topicConcurrency > this.concurrency)
      throw new InvalidRelayOptionsException(
        RELAY_OPTION_MESSAGE('topicConcurrency', options.topicConcurrency, `a positive integer at most concurrency (${this.concurrency})`),
      );
    this.handlerTimeoutMs = options.handlerTimeoutMs ?? 30_000;
    if (!positiveInteger(this.handlerTimeoutMs))
      throw new InvalidRelayOptionsException(RELAY_OPTION_MESSAGE('handlerTimeoutMs', options.handlerTimeoutMs, 'a positive integer (ms)'));
    this.leaseMs = options.leaseMs ?? this.handlerTimeoutMs + LEASE_MARGIN_MS;
    if (!positiveInteger(this.leaseMs))
      throw new InvalidRelayOptionsException(RELAY_OPTION_MESSAGE('leaseMs', options.leaseMs, 'a positive integer (ms)'));
    if (this.leaseMs <= this.handlerTimeoutMs)
      throw new InvalidRelayOptionsException(RELAY_LEASE_MESSAGE(this.leaseMs, this.handlerTimeoutMs));
    this.pollIntervalMs = options.pollIntervalMs ?? 1000;
    if (!positiveInteger(this.pollIntervalMs))
      throw new InvalidRelayOptionsException(RELAY_OPTION_MESSAGE('pollIntervalMs', options.pollIntervalMs, 'a positive integer (ms)'));
    this.backoffBaseMs = options.backoff?.baseMs ?? 1000;
    this.backoffMaxMs = options.backoff?.maxMs ?? 60_000;
  }

  on(topic: string, handler: OutboxHandler): void {
    if (this.handlers.has(topic)) throw new DuplicateTopicHandlerException(topic);
    this.handlers.set(topic, handler);
  }

  /** What the running relay did since it was created. */
  get stats(): RelayPass {
    return { ...this.totals };
  }

  /** Run in the background: poll every pollIntervalMs, and claim again whenever a delivery frees a slot. */
  start(): void {
    if (this.timer) return;
    this.running = true;
    this.life = { crashed: null };
    const tick = () => {
      if (this.reaping) return; // the last tick's reap still runs (a slow database): it pumps when it ends
      this.reaping = this.store
        .reapExpired()
        .then((n) => void (this.totals.dead += n))
        .catch((err) => this.logger.error(`relay reap failed: ${String(err)}`))
        .finally(() => {
          this.reaping = null;
          this.pump();
        });
    };
    this.timer = setInterval(tick, this.pollIntervalMs);
    this.timer.unref();
    tick();
  }

  /**
   * Stop claiming, and wait for the deliveries in flight to settle: the running relay's and those of runOnce passes
   * under way. A handler abandoned at its deadline that still runs is waited for at most leaseMs - handlerTimeoutMs
   * more (the rest of its lease); a success it reports after that is not settled (the event is tried again, or stays
   * dead for an admin to retry), so nothing of this relay reaches the database once stop has resolved.
   */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.reaping?.catch(() => undefined);
    await this.claiming?.catch(() => undefined);
    await Promise.allSettled([...this.active, ...this.passes]);
    if (this.abandoned.size > 0) {
      let grace: NodeJS.Timeout | undefined;
      const graceOver = new Promise<void>((resolve) => (grace = setTimeout(resolve, this.leaseMs - this.handlerTimeoutMs)));
      await Promise.race([Promise.allSettled([...this.abandoned]), graceOver]);
      clearTimeout(grace);
      if (this.abandoned.size > 0)
        this.logger.warn(
          `stopped with ${this.abandoned.size} handler(s) still running past their deadline: a success they report now is not settled`,
        );
    }
    this.generation++;
  }

  /**
   * One pass: settle the claims whose holder died on their last attempt, claim as many due events
   * as there are free slots (per-topic limits applied), deliver them concurrently and settle each
   * under its lease token. A RelayCrash from a hook rejects the pass after the others stop.
   * stop() waits for a pass under way.
   */
  runOnce(): Promise<RelayPass> {
    const pass = this.pass();
    this.passes.add(pass);
    void pass.catch(() => undefined).finally(() => this.passes.delete(pass));
    return pass;
  }

  private async pass(): Promise<RelayPass> {
    const pass: Counts = { claimed: 0, delivered: 0, failed: 0, dead: 0, stale: 0 };
    pass.dead += await this.store.reapExpired();
    const claimed = await this.claimFree();
    pass.claimed = claimed.length;
    const life: Life = { crashed: null };
    const outcomes = await Promise.allSettled(claimed.map((c) => this.process(c, pass, life)));
    if (life.crashed) throw life.crashed;
    const failure = outcomes.find((o) => o.status === 'rejected');
    if (failure) throw (failure as PromiseRejectedResult).reason;
    return pass;
  }

  /** Claim up to the free slots; the slots (and the topics' counts) are taken before the claim resolves to the caller. */
  private async claimFree(): Promise<ClaimedEvent[]> {
    const free = this.concurrency - this.inFlight - this.reserved;
    if (free <= 0) return [];
    this.reserved += free;
    let claimed: ClaimedEvent[] = [];
    try {
      claimed = await this.store.claim({
        owner: this.owner,
        limit: free,
        leaseMs: this.leaseMs,
        perTopic: { limit: this.topicConcurrency, busy: Object.fromEntries(this.busy) },
        // Only what this relay can deliver: a relay without a topic's handler leaves its events to one that has it.
        topics: [...this.handlers.keys()],
      });
    } finally {
      this.reserved -= free;
    }
    for (const c of claimed) {
      this.inFlight++;
      this.busy.set(c.event.topic, (this.busy.get(c.event.topic) ?? 0) + 1);
    }
    return claimed;
  }

  private release(topic: string): void {
    this.inFlight--;
    const n = (this.busy.get(topic) ?? 1) - 1;
    if (n <= 0) this.busy.delete(topic);
    else this.busy.set(topic, n);
  }

  /** The running relay: claim into the free slots, one claim at a time; a request during a claim runs another after it. */
  private pump(): void {
    if (!this.running) return;
    if (this.claiming) {
      this.claimAgain = true;
      return;
    }
    this.claiming = (async () => {
      do {
        this.claimAgain = false;
        const claimed = await this.claimFree();
        this.totals.claimed += claimed.length;
        for (const c of claimed) this.launch(c);
      } while (this.claimAgain && this.running);
    })()
      .catch((err) => this.logger.error(`relay claim failed: ${String(err)}`))
      .finally(() => (this.claiming = null));
  }

  private launch(c: ClaimedEvent): void {
    const life = this.life;
    const task: Promise<void> = this.process(c, this.totals, life)
      .catch((err) => {
        if (err instanceof RelayCrash) {
          // The simulated process is dead: it claims nothing more.
          this.running = false;
          if (this.timer) clearInterval(this.timer);
          this.timer = null;
        } else this.logger.error(`delivery of event ${c.event.id} failed: ${String(err)}`);
      })
      .finally(() => {
        this.active.delete(task);
        this.pump();
      });
    this.active.add(task);
  }

  /** Deliver one claimed event and settle it. Always releases its slot (once an abandoned handler has ended too). */
  private async process(c: ClaimedEvent, pass: Counts, life: Life): Promise<void> {
    const { event, leaseToken: token } = c;
    let abandoned: Promise<unknown> | null = null;
    try {
      await this.hook(life, 'afterClaim', event);
      this.alive(life);
      if (!(await this.store.renew(event.id, token, this.leaseMs))) {
        this.logger.warn(`event ${event.id}: the lease was lost before delivery (another relay took it over); skipped`);
        pass.stale++;
        return;
      }
      this.alive(life);
      const { error, late } = await this.deliver(event, token, life);
      abandoned = late;
      if (error === null) await this.hook(life, 'afterDeliver', event);
      this.alive(life);
      const settled = error === null ? await this.settleDelivered(event, token) : await this.settleFailed(event, token, error);
      if (settled === 'stale') pass.stale++;
      else if (settled === 'delivered') pass.delivered++;
      else if (settled === 'dead') pass.dead++;
      else pass.failed++;
    } finally {
      // A handler that overran its deadline and ignores its signal keeps its slot until it ends:
      // the relay never runs more handlers at once than `concurrency`.
      if (abandoned) void abandoned.finally(() => this.release(event.topic));
      else this.release(event.topic);
    }
  }

  /** A crash elsewhere in this pass (or running relay) means the process is dead: go no further. */
  private alive(life: Life): void {
    if (life.crashed) throw life.crashed;
  }

  private async hook(life: Life, name: 'afterClaim' | 'afterDeliver', event: OutboxEvent): Promise<void> {
    this.alive(life);
    const hooks = this.options.hooks;
    const fn = hooks && Object.hasOwn(hooks, name) ? hooks[name] : undefined;
    if (!fn) return;
    try {
      await fn(event);
    } catch (err) {
      // Set synchronously when the hook throws synchronously: the other deliveries of the pass see it before they start.
      if (err instanceof RelayCrash) life.crashed ??= err;
      throw err;
    }
  }

  /**
   * Run the handler under its deadline. `late` is the handler still running after the deadline: its
   * success, when it comes, is settled then (a late success wins over the failure recorded now).
   */
  private async deliver(event: OutboxEvent, token: string, life: Life): Promise<{ error: string | null; late: Promise<unknown> | null }> {
    const handler = this.handlers.get(event.topic);
    if (!handler) return { error: `no handler for topic '${event.topic}'`, late: null };
    const controller = new AbortController();
    const timeoutMs = this.handlerTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<string>((resolve) => {
      timer = setTimeout(() => {
        controller.abort();
        resolve(`handler timed out after ${timeoutMs} ms`);
      }, timeoutMs);
    });
    const work = Promise.resolve().then(() => handler(event, { leaseToken: token, attempt: event.attempts, signal: controller.signal }));
    work.catch(() => undefined);
    try {
      const error = await Promise.race([work.then(() => null), timeout]);
      if (error === null) return { error: null, late: null };
      const generation = this.generation;
      const late: Promise<unknown> = work
        .then(
          () => {
            if (generation !== this.generation) {
              this.logger.warn(`event ${event.id}: its handler succeeded after the relay stopped; the success is not settled`);
              return;
            }
            return this.settleDelivered(event, token).catch((err) =>
              this.logger.error(`event ${event.id}: a late success could not be settled: ${String(err)}`),
            );
          },
          () => undefined,
        )
        .finally(() => this.abandoned.delete(late));
      this.abandoned.add(late);
      return { error, late };
    } catch (err) {
      if (err instanceof RelayCrash) {
        life.crashed ??= err;
        throw err;
      }
      return { error: (err instanceof Error ? err.message : String(err)).slice(0, 1000), late: null };
    } finally {
      if (timer) clearTimeout(timer);
    }
  }

  private async settleDelivered(event: OutboxEvent, token: string): Promise<'delivered' | 'stale'> {
    // Settled under the token it was claimed with; the store also lets a success win over a
    // dead-lettering, so a settlement that failed (the database was away) is tried again, with
    // backoff, also after the lease ran out: a delivered event must not stay dead for an admin to resend.
    // A late success whose relay stopped meanwhile is not tried again: the database may be closing.
    const generation = this.generation;
    let settled: 'delivered' | 'stale' | undefined;
    for (let attempt = 0; settled === undefined; attempt++) {
      try {
        settled = await this.store.settleDelivered(event.id, token);
      } catch (err) {
        if (attempt >= SETTLE_RETRIES || generation !== this.generation) throw err;
        this.logger.warn(`event ${event.id}: settling its delivery failed (${String(err)}); trying again`);
        await new Promise((resolve) => setTimeout(resolve, Math.min(SETTLE_BACKOFF_MAX_MS, 50 * 2 ** attempt)));
      }
    }
    if (settled === 'stale') this.logger.warn(`event ${event.id}: a newer claim owns it; this relay's delivery is not settled (fenced)`);
    return settled;
  }

  private async settleFailed(event: OutboxEvent, token: string, error: string): Promise<'failed' | 'dead' | 'stale'> {
    const retryInMs = Math.min(this.backoffMaxMs, this.backoffBaseMs * 2 ** Math.max(0, event.attempts - 1));
    const settled = await this.store.settleFailed(event.id, token, { error, retryInMs });
    if (settled === 'dead')
      this.logger.warn(`event ${event.id} (${event.topic}) is dead-lettered after ${event.attempts} attempts: ${error}`);
    return settled;
  }
}
