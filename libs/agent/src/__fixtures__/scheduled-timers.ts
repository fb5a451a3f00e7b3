/** A timer `run` set, with what `observe` read when it was set and when it fired (undefined: it never fired). */
export interface ScheduledTimer<T> {
  readonly ms: number;
  readonly whenSet: T;
  readonly whenFired?: T;
}

/**
 * The timers (setTimeout) set while `run` runs, each with `observe()` read when it was set and when it fired: a test
 * asserts a wait a client chose (the SDK's sleep before a retry, a grace period) by its length and its place among the
 * events, not by the wall time that went by.
 */
export async function timersDuring<R, T>(observe: () => T, run: () => PromiseLike<R>): Promise<{ result: R; timers: ScheduledTimer<T>[] }> {
  const original = globalThis.setTimeout;
  const timers: Array<{ ms: number; whenSet: T; whenFired?: T }> = [];
  const spy = ((handler: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) => {
    const timer: { ms: number; whenSet: T; whenFired?: T } = { ms: Number(ms ?? 0), whenSet: observe() };
    timers.push(timer);
    return original(
      (...a: unknown[]) => {
        timer.whenFired = observe();
        handler(...a);
      },
      ms,
      ...args,
    );
  }) as typeof setTimeout;
  globalThis.setTimeout = spy;
  try {
    return { result: await run(), timers };
  } finally {
    globalThis.setTimeout = original;
  }
}
