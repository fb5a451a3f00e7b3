import { PerformanceObserver } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** A timed loop: does `ops` operations and returns a number derived from their results (kept, so nothing is elided). */
export type Kernel = (ops: number) => number;

let sink = 0;

/** Fold a result into a global the optimiser cannot see through. */
export function consume(value: number): void {
  sink = (sink + value) | 0;
}

/** Printed at the end of the run, so the accumulated results are observably used. */
export function checksum(): number {
  return sink;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function timeKernel(kernel: Kernel, ops: number): number {
  const t0 = process.hrtime.bigint();
  const acc = kernel(ops);
  const t1 = process.hrtime.bigint();
  consume(acc);
  return Number(t1 - t0);
}

/** The number of ops that makes one round of `kernel` last about `roundMs`. */
function calibrate(kernel: Kernel, roundMs: number): number {
  const target = roundMs * 1e6;
  let ops = 8;
  for (;;) {
    const ns = timeKernel(kernel, ops);
    if (ns >= target / 4 || ops >= 2 ** 30) return Math.max(1, Math.round((ops * target) / Math.max(ns, 1)));
    ops *= 2;
  }
}

export interface SyncBenchOptions {
  /** Time spent running each kernel before measuring (ms). */
  readonly warmupMs: number;
  /** Length of one measured round (ms). */
  readonly roundMs: number;
  /** Measured rounds per kernel; the median round is reported. */
  readonly rounds: number;
}

/**
 * Median ns per op of each kernel. Kernels are warmed up, then measured in interleaved rounds
 * (A, B, A, B, ...) so that a slow stretch of the machine hits all of them alike.
 */
export function nsPerOp(kernels: Readonly<Record<string, Kernel>>, options: SyncBenchOptions): Record<string, number> {
  const names = Object.keys(kernels);
  const ops: Record<string, number> = {};
  for (const name of names) {
    const kernel = kernels[name];
    const warmEnd = process.hrtime.bigint() + BigInt(Math.round(options.warmupMs * 1e6));
    let chunk = 8;
    while (process.hrtime.bigint() < warmEnd) {
      const ns = timeKernel(kernel, chunk);
      if (ns < 2e6) chunk *= 2;
    }
    ops[name] = calibrate(kernel, options.roundMs);
  }
  const samples: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < options.rounds; r++) {
    for (const name of names) samples[name].push(timeKernel(kernels[name], ops[name]) / ops[name]);
  }
  return Object.fromEntries(names.map((n) => [n, median(samples[n])]));
}

/** One complete run of an async workload (e.g. one agent run). */
export type AsyncRun = () => Promise<number>;

export interface AsyncBenchOptions {
  /** Unmeasured rounds first (interleaved like the measured ones, so each workload warms up after the other ran). */
  readonly warmupRounds: number;
  readonly rounds: number;
  readonly runsPerRound: number;
}

/** Median ms per run of each workload: interleaved rounds of sequential runs, the warm-up rounds discarded. */
export async function msPerRun(workloads: Readonly<Record<string, AsyncRun>>, options: AsyncBenchOptions): Promise<Record<string, number>> {
  const names = Object.keys(workloads);
  const samples: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < options.warmupRounds + options.rounds; r++) {
    for (const name of names) {
      const run = workloads[name];
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < options.runsPerRound; i++) consume(await run());
      const t1 = process.hrtime.bigint();
      if (r >= options.warmupRounds) samples[name].push(Number(t1 - t0) / 1e6 / options.runsPerRound);
    }
  }
  return Object.fromEntries(names.map((n) => [n, median(samples[n])]));
}

/** `global.gc`, from `--expose-gc` (the npm script passes it) or, failing that, enabled at run time. */
export function gcFunction(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (typeof exposed === 'function') return exposed;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** Let the event loop turn a few times, so pending 'gc' performance entries reach their observer. */
async function settle(): Promise<void> {
  for (let i = 0; i < 4; i++) await new Promise<void>((resolve) => setImmediate(resolve));
  await new Promise<void>((resolve) => setTimeout(resolve, 2));
}

export interface AllocationResult {
  /** Median bytes allocated per run over the clean trials. */
  readonly bytesPerRun: number;
  /** Runs per trial at which batches ran without a GC. */
  readonly runsPerTrial: number;
  readonly cleanTrials: number;
  readonly discardedTrials: number;
}

/**
 * Bytes allocated per run: force a full GC, read heapUsed, do `runs` runs, read heapUsed again.
 * With no GC in between, the growth is everything allocated (garbage included). A 'gc'
 * PerformanceObserver tells whether a collection happened; such a trial is discarded and the
 * batch halved. The median of `trials` clean batches is reported.
 */
export async function bytesPerRun(run: AsyncRun, startRuns: number, trials: number): Promise<AllocationResult> {
  const gc = gcFunction();
  let collections = 0;
  const observer = new PerformanceObserver((list) => {
    collections += list.getEntries().length;
  });
  observer.observe({ entryTypes: ['gc'] });
  const samples: number[] = [];
  let runs = Math.max(1, startRuns);
  let discarded = 0;
  try {
    for (let attempt = 0; samples.length < trials && attempt < trials * 8; attempt++) {
      gc();
      await settle();
      collections = 0;
      let acc = 0;
      const before = process.memoryUsage().heapUsed;
      for (let i = 0; i < runs; i++) acc += await run();
      const after = process.memoryUsage().heapUsed;
      consume(acc);
      await settle();
      if (collections === 0 && after >= before) samples.push((after - before) / runs);
      else {
        discarded++;
        if (runs > 1) runs = Math.max(1, runs >> 1);
      }
    }
  } finally {
    observer.disconnect();
  }
  if (samples.length === 0) throw new Error(`could not complete a batch without a GC (down to ${runs} run(s) per batch)`);
  return { bytesPerRun: median(samples), runsPerTrial: runs, cleanTrials: samples.length, discardedTrials: discarded };
}
