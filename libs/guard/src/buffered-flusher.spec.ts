import { BufferedFlusher, BufferedFlusherOptions } from './buffered-flusher';

/** A buffer of numbers written to a store that fails while `down`; what the flusher was told, in order. */
function harness(over: Partial<BufferedFlusherOptions> = {}) {
  const state = { pending: [] as number[], written: [] as number[], down: false, drains: 0, running: 0, mostAtOnce: 0 };
  const failures: Array<[string, number]> = [];
  const drops: string[] = [];
  let release: (() => void) | undefined;
  const flusher = new BufferedFlusher({
    intervalMs: 5,
    maxIntervalMs: 40,
    closeAttempts: 3,
    hasPending: () => state.pending.length > 0,
    drain: async () => {
      state.drains++;
      state.running++;
      state.mostAtOnce = Math.max(state.mostAtOnce, state.running);
      try {
        const batch = state.pending.slice(); // what waits when the drain starts: later ones wait for the next
        if (release) await new Promise<void>((r) => (release = r));
        if (state.down) throw new Error(`down (drain ${state.drains})`);
        state.written.push(...state.pending.splice(0, batch.length));
      } finally {
        state.running--;
      }
    },
    failed: (err, retryInMs) => failures.push([(err as Error).message, retryInMs]),
    dropPending: (err) => {
      drops.push(`${state.pending.length} dropped: ${(err as Error).message}`);
      state.pending = [];
    },
    ...over,
  });
  /** The next drain waits until the returned function is called. */
  const hold = () => {
    release = () => undefined;
    return () => {
      const r = release;
      release = undefined;
      r?.();
    };
  };
  return { flusher, state, failures, drops, hold };
}

/** Poll `check` every 5 ms, at most 400 times (a bound, not a time assertion). */
async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
}

describe('BufferedFlusher', () => {
  it('drains what is pending on flush(), and does not drain when nothing is', async () => {
    const { flusher, state } = harness();
    await flusher.flush();
    expect(state.drains).toBe(0);
    state.pending.push(1, 2);
    await flusher.flush();
    expect([state.drains, state.written, state.pending]).toEqual([1, [1, 2], []]);
    await flusher.close();
  });

  it('runs one drain at a time: a flush during one waits for it, then drains what came meanwhile', async () => {
    const { flusher, state, hold } = harness();
    state.pending.push(1);
    const release = hold();
    const first = flusher.flush();
    await until(() => state.running === 1);
    expect(flusher.flushing).toBe(true);
    state.pending.push(2);
    const second = flusher.flush();
    release();
    await Promise.all([first, second]);
    expect(state.mostAtOnce).toBe(1);
    expect(state.drains).toBe(2);
    expect(state.written).toEqual([1, 2]);
    expect(flusher.flushing).toBe(false);
    await flusher.close();
  });

  it('backs off while the store fails (the wait doubles up to maxIntervalMs), and goes back to intervalMs after a success', async () => {
    // Long waits: the retry timers the failures arm do not fire during the test (close() clears them).
    const { flusher, state, failures } = harness({ intervalMs: 1000, maxIntervalMs: 8000 });
    state.pending.push(1);
    state.down = true;
    expect([flusher.retryInMs, flusher.backingOff]).toEqual([1000, false]);
    for (let i = 0; i < 4; i++) await expect(flusher.flush()).rejects.toThrow(/^down/);
    expect(failures).toEqual([
      ['down (drain 1)', 2000],
      ['down (drain 2)', 4000],
      ['down (drain 3)', 8000],
      ['down (drain 4)', 8000],
    ]);
    expect([flusher.retryInMs, flusher.backingOff, state.pending]).toEqual([8000, true, [1]]);
    state.down = false;
    await flusher.flush();
    expect([flusher.retryInMs, flusher.backingOff, state.written]).toEqual([1000, false, [1]]);
    await flusher.close();
  });

  it('retries on its own after a failure, and flushes on the timer once armed (one timer however often it is armed)', async () => {
    const { flusher, state } = harness();
    state.pending.push(1);
    state.down = true;
    await expect(flusher.flush()).rejects.toThrow(/^down/);
    state.down = false;
    await until(() => state.written.length === 1);
    expect(state.written).toEqual([1]);

    const drainsBefore = state.drains;
    state.pending.push(2);
    flusher.arm();
    flusher.arm();
    flusher.arm();
    await until(() => state.written.length === 2);
    expect(state.written).toEqual([1, 2]);
    expect(state.drains - drainsBefore).toBe(1);
    await flusher.close();
  });

  it('close() flushes what is pending, and arms no timer after it', async () => {
    const { flusher, state } = harness();
    state.pending.push(1, 2, 3);
    await flusher.close();
    expect(state.written).toEqual([1, 2, 3]);
    state.pending.push(4);
    flusher.arm();
    await new Promise((r) => setTimeout(r, 30)); // several intervals: a timer armed after close() would have drained
    expect([state.drains, state.pending]).toEqual([1, [4]]);
  });

  it('close() tries closeAttempts times while the store fails, then has the owner drop what is left and rejects with the last error', async () => {
    const { flusher, state, drops } = harness({ closeAttempts: 2 });
    state.pending.push(1, 2);
    state.down = true;
    await expect(flusher.close()).rejects.toThrow('down (drain 2)');
    expect(state.drains).toBe(2);
    expect(drops).toEqual(['2 dropped: down (drain 2)']);
    expect(state.pending).toEqual([]);
    expect(state.written).toEqual([]);
  });
});
