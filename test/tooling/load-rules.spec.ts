import { concurrencies, judgeFlat, markdownTable, median, MemorySample, StepResult, stopReason } from '../../bench/load/rules';
import { memoryChartSvg, niceStep } from '../../bench/load/svg';

const MiB = 1024 * 1024;
const step = (connections: number, p99: number, errors = 0): StepResult => ({
  connections,
  requests: 100,
  seconds: 3,
  rps: 33.3,
  p50: p99 / 2,
  p99,
  errors,
  statuses: { '200': 100 - errors },
});
const rule = { factor: 2, maxConnections: 64 };

describe('the load run: when a scenario stops raising its concurrency', () => {
  it('doubles the connections from 1 up to the cap, the cap included when it is not a power of 2', () => {
    expect(concurrencies(64)).toEqual([1, 2, 4, 8, 16, 32, 64]);
    expect(concurrencies(48)).toEqual([1, 2, 4, 8, 16, 32, 48]);
    expect(concurrencies(1)).toEqual([1]);
    expect(() => concurrencies(0)).toThrow(/maxConnections/);
  });

  it("stops once a step's p99 is at least double the first step's, not before", () => {
    expect(stopReason([step(1, 10)], rule)).toBeNull();
    expect(stopReason([step(1, 10), step(2, 19.9)], rule)).toBeNull();
    expect(stopReason([step(1, 10), step(2, 12), step(4, 20)], rule)).toMatch(/p99 20\.0 ms >= 2 x the first step's 10\.0 ms/);
    // Measured against the first step, not the one before: a slow climb stops too.
    expect(stopReason([step(1, 10), step(2, 15), step(4, 19), step(8, 21)], rule)).toMatch(/>= 2 x/);
  });

  it('stops at the cap, and at the first step with errors', () => {
    expect(stopReason([step(1, 10), step(64, 12)], rule)).toBe('cap of 64 connections reached');
    expect(stopReason([step(1, 10), step(2, 10, 3)], rule)).toBe('errors at 2 connections');
    expect(stopReason([step(1, 10, 1)], rule)).toBe('errors at 1 connections');
    expect(stopReason([], rule)).toBeNull();
  });

  it('prints the steps as a Markdown table, the scenario named on its first row', () => {
    const table = markdownTable([{ name: 'agent run', steps: [step(1, 10), step(2, 21)], stoppedBecause: 'p99' }]);
    const lines = table.split('\n');
    expect(lines[0]).toMatch(/^\| Scenario\s+\| Connections \| req\/s \| p50 \(ms\) \| p99 \(ms\) \| Errors \/ non-2xx \|$/);
    expect(lines[1]).toMatch(/^\| -+ \| -+: \|/);
    expect(lines[2]).toMatch(/^\| agent run \|\s+1 \|\s+33\.3 \|\s+5\.00 \|\s+10\.0 \|\s+0 \|$/);
    expect(lines[3]).toMatch(/^\| {11}\|\s+2 \|/);
    expect(lines).toHaveLength(4);
  });
});

describe('the load run: whether the soak memory is flat', () => {
  const flatRule = { tolerance: 0.1, slackBytes: 4 * MiB };
  const series = (heap: number[], rss: number[] = heap.map((h) => h + 100)): MemorySample[] =>
    heap.map((h, i) => ({ t: i * 10, heapUsed: h * MiB, rss: rss[i] * MiB }));

  it('takes the median', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });

  it('ignores the warm-up third and calls a plateau flat', () => {
    const verdict = judgeFlat(series([20, 40, 55, 60, 61, 60, 62, 61, 60]), flatRule);
    expect(verdict.flat).toBe(true);
    expect(verdict.heap.middle).toBe(60 * MiB);
    expect(verdict.heap.last).toBe(61 * MiB);
    expect(verdict.verdict).toMatch(/^flat: median heap 60\.0 -> 61\.0 MiB \(\+1\.7 %\)/);
  });

  it('calls a steady climb of the heap, or of the RSS alone, not flat', () => {
    const climbing = judgeFlat(series([60, 64, 68, 72, 76, 80, 84, 88, 92]), flatRule);
    expect(climbing.flat).toBe(false);
    expect(climbing.verdict).toMatch(/^NOT flat/);
    const rssOnly = judgeFlat(series([60, 60, 60, 60, 60, 60, 60, 60, 60], [400, 400, 400, 420, 420, 420, 470, 470, 470]), flatRule);
    expect(rssOnly.flat).toBe(false);
    expect(rssOnly.rss.growth).toBeCloseTo(50 / 420, 5);
  });

  it('allows the slack on a small heap, and judges nothing from fewer than 3 samples', () => {
    expect(judgeFlat(series([10, 10, 10, 10, 10, 10, 13, 13, 13]), flatRule).flat).toBe(true);
    expect(judgeFlat(series([10, 10, 10, 10, 10, 10, 15.5, 15.5, 15.5]), flatRule).flat).toBe(false);
    const short = judgeFlat(series([10, 10]), flatRule);
    expect(short.flat).toBe(false);
    expect(short.verdict).toMatch(/not judged: 2 samples/);
  });

  it('orders the samples by time before splitting them', () => {
    const shuffled = series([60, 60, 60, 60, 60, 60, 90, 90, 90]).reverse();
    expect(judgeFlat(shuffled, flatRule).flat).toBe(false);
  });
});

describe('the load run: the memory chart', () => {
  const samples: MemorySample[] = [0, 10, 20, 30].map((t, i) => ({ t, heapUsed: (50 + i) * MiB, rss: (200 + i) * MiB }));

  it('picks round steps for the axes', () => {
    expect([0.7, 1, 3, 7, 12, 45, 180].map(niceStep)).toEqual([1, 1, 5, 10, 20, 50, 200]);
    expect(niceStep(0)).toBe(1);
  });

  it('draws both series as polylines over the samples, scaled to the plot, with the title escaped', () => {
    const svg = memoryChartSvg(samples, { title: 'soak <PGlite> & co', subtitle: 'flat', width: 640, height: 260 });
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg" width="640" height="260"')).toBe(true);
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
    expect(svg).toContain('soak &lt;PGlite&gt; &amp; co');
    const lines = [...svg.matchAll(/<polyline[^>]*points="([^"]+)"/g)].map((m) => m[1].split(' ').map((p) => p.split(',').map(Number)));
    expect(lines).toHaveLength(2);
    for (const points of lines) {
      expect(points).toHaveLength(4);
      // x grows with time from the left edge of the plot (52) to its right edge (640 - 16).
      expect(points[0][0]).toBe(52);
      expect(points[3][0]).toBe(624);
    }
    // RSS (the first series) lies above the heap: a smaller y.
    expect(lines[0][0][1]).toBeLessThan(lines[1][0][1]);
    // The y axis reaches past the largest value (203 MiB) in round steps: 0, 100, 200, 300.
    expect([...svg.matchAll(/text-anchor="end">(\d+)<\/text>/g)].map((m) => m[1])).toEqual(['0', '100', '200', '300']);
    expect(memoryChartSvg(samples, { title: 't' })).toBe(memoryChartSvg([...samples].reverse(), { title: 't' }));
  });

  it('draws an empty chart without samples', () => {
    const svg = memoryChartSvg([], { title: 'nothing' });
    expect(svg).not.toContain('<polyline');
    expect(svg).toContain('nothing');
  });
});
