/**
 * The pure rules of the load run (`npm run load`): when a scenario stops raising its concurrency, whether the soak's
 * memory stayed flat, and the tables it prints. No I/O here: test/tooling/load-rules.spec.ts runs these in CI.
 */

/** One step of a scenario: autocannon at one concurrency. Latencies in milliseconds. */
export interface StepResult {
  readonly connections: number;
  /** Responses received (2xx or not). */
  readonly requests: number;
  readonly seconds: number;
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  /** Non-2xx answers, socket errors, timeouts and 2xx answers whose body was not what the scenario expects. */
  readonly errors: number;
  /** Answers per status code, e.g. { "200": 1200 }. */
  readonly statuses: Readonly<Record<string, number>>;
}

export interface StepRule {
  /** Stop once a step's p99 is at least this many times the first step's. Default 2 (the p99 "doubled"). */
  readonly factor: number;
  /** The highest concurrency tried. */
  readonly maxConnections: number;
}

/** The concurrencies tried, in order: 1, 2, 4, ... up to and including the cap (the cap itself when it is not a power of 2). */
export function concurrencies(maxConnections: number): number[] {
  if (!Number.isInteger(maxConnections) || maxConnections < 1)
    throw new Error(`maxConnections must be a whole number >= 1 (got ${maxConnections})`);
  const out: number[] = [];
  for (let c = 1; c < maxConnections; c *= 2) out.push(c);
  out.push(maxConnections);
  return out;
}

/**
 * Why the scenario stops after the steps so far, or null to go on to the next concurrency: a step with errors (the run
 * fails), the p99 at least `factor` times the first step's, or the cap reached.
 */
export function stopReason(steps: readonly StepResult[], rule: StepRule): string | null {
  if (steps.length === 0) return null;
  const last = steps[steps.length - 1];
  if (last.errors > 0) return `errors at ${last.connections} connections`;
  const first = steps[0];
  if (steps.length > 1 && last.p99 >= rule.factor * first.p99)
    return `p99 ${fmt(last.p99)} ms >= ${rule.factor} x the first step's ${fmt(first.p99)} ms`;
  if (last.connections >= rule.maxConnections) return `cap of ${rule.maxConnections} connections reached`;
  return null;
}

/** The median of the values (the mean of the middle two for an even count); NaN for none. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** One memory sample of the sample's process (after a GC when it could run one). Bytes; `t` in seconds since the soak began. */
export interface MemorySample {
  readonly t: number;
  readonly heapUsed: number;
  readonly rss: number;
}

export interface FlatRule {
  /** How much the last third's median may exceed the second third's, as a fraction (0.1: 10 %). */
  readonly tolerance: number;
  /** An absolute slack in bytes on top of it, so that a few MB on a small heap is not called a leak. */
  readonly slackBytes: number;
}

export interface Flatness {
  readonly flat: boolean;
  /** Medians of the second and last thirds (bytes); NaN when not judged. */
  readonly heap: { readonly middle: number; readonly last: number; readonly growth: number };
  readonly rss: { readonly middle: number; readonly last: number; readonly growth: number };
  readonly verdict: string;
}

/**
 * "Flat": the samples split into thirds by time; the first third is the warm-up (JIT, pools, caches filling) and is
 * not judged; the median heapUsed and the median RSS of the last third are each at most
 * `(1 + tolerance) x` the second third's median `+ slackBytes`. Fewer than 3 samples cannot be judged: not flat.
 */
export function judgeFlat(samples: readonly MemorySample[], rule: FlatRule): Flatness {
  const none = { middle: NaN, last: NaN, growth: NaN };
  if (samples.length < 3) return { flat: false, heap: none, rss: none, verdict: `not judged: ${samples.length} samples (3 at least)` };
  const sorted = [...samples].sort((a, b) => a.t - b.t);
  const n = sorted.length;
  const middle = sorted.slice(Math.floor(n / 3), Math.floor((2 * n) / 3));
  const last = sorted.slice(Math.floor((2 * n) / 3));
  const compare = (pick: (s: MemorySample) => number) => {
    const m = median(middle.map(pick));
    const l = median(last.map(pick));
    return { middle: m, last: l, growth: l / m - 1, ok: l <= m * (1 + rule.tolerance) + rule.slackBytes };
  };
  const heap = compare((s) => s.heapUsed);
  const rss = compare((s) => s.rss);
  const flat = heap.ok && rss.ok;
  const pct = (g: number) => `${g >= 0 ? '+' : ''}${(g * 100).toFixed(1)} %`;
  const verdict =
    `${flat ? 'flat' : 'NOT flat'}: median heap ${mib(heap.middle)} -> ${mib(heap.last)} MiB (${pct(heap.growth)}), ` +
    `RSS ${mib(rss.middle)} -> ${mib(rss.last)} MiB (${pct(rss.growth)}), second third -> last third ` +
    `(allowed: +${(rule.tolerance * 100).toFixed(0)} % + ${mib(rule.slackBytes)} MiB)`;
  return { flat, heap: strip(heap), rss: strip(rss), verdict };
}

function strip(x: { middle: number; last: number; growth: number }) {
  return { middle: x.middle, last: x.last, growth: x.growth };
}

export function mib(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(1);
}

/** A number for a table: whole above 100, one decimal above 10, two below. */
export function fmt(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  if (Math.abs(x) >= 100) return Math.round(x).toLocaleString('en-US');
  if (Math.abs(x) >= 10) return x.toFixed(1);
  return x.toFixed(2);
}

export interface ScenarioResult {
  readonly name: string;
  readonly steps: readonly StepResult[];
  readonly stoppedBecause: string;
}

/** The step table as Markdown (what docs/development/load.md shows): one row per step, the scenario named on its first row. */
export function markdownTable(scenarios: readonly ScenarioResult[]): string {
  const rows = [
    ['Scenario', 'Connections', 'req/s', 'p50 (ms)', 'p99 (ms)', 'Errors / non-2xx'],
    ...scenarios.flatMap((s) =>
      s.steps.map((step, i) => [
        i === 0 ? s.name : '',
        String(step.connections),
        fmt(step.rps),
        fmt(step.p50),
        fmt(step.p99),
        String(step.errors),
      ]),
    ),
  ];
  return renderTable(rows, [false, true, true, true, true, true]);
}

/** Rows as a Markdown table, columns padded (right-aligned where `right[i]`), as Prettier would leave it. */
export function renderTable(rows: readonly (readonly string[])[], right: readonly boolean[]): string {
  const widths = rows[0].map((_, i) => Math.max(3, ...rows.map((r) => r[i].length)));
  const line = (r: readonly string[]) => `| ${r.map((c, i) => (right[i] ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join(' | ')} |`;
  const rule = `| ${widths.map((w, i) => (right[i] ? `${'-'.repeat(w - 1)}:` : '-'.repeat(w))).join(' | ')} |`;
  return [line(rows[0]), rule, ...rows.slice(1).map(line)].join('\n');
}
