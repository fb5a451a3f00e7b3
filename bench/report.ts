import { writeFileSync } from 'node:fs';

/** One measured comparison: our value against the peer's (the baseline), measured in the same run. */
export interface Row {
  readonly name: string;
  readonly value: number;
  readonly unit: string;
  readonly baseline: number;
  /** For the printed table only (PASS/MISS); a miss never fails the run. */
  readonly target: { readonly text: string; readonly met: boolean };
  /** For the printed table only: a remark such as "guard 675x faster". */
  readonly note?: string;
}

/** The shape written to bench-results.json. */
export interface ResultRecord {
  readonly name: string;
  readonly value: number;
  readonly unit: string;
  readonly baseline: number;
  /** value / baseline */
  readonly ratio: number;
}

/** Round to `digits` significant digits (keeps small ns values and large casbin values readable). */
function significant(x: number, digits = 4): number {
  if (!Number.isFinite(x) || x === 0) return x;
  return Number(x.toPrecision(digits));
}

export function toRecords(rows: readonly Row[]): ResultRecord[] {
  return rows.map((r) => ({
    name: r.name,
    value: significant(r.value),
    unit: r.unit,
    baseline: significant(r.baseline),
    ratio: significant(r.value / r.baseline),
  }));
}

/** A figure as the table and the generated docs page print it (one rule for both: scripts/generated-docs.js). */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { show } = require('../scripts/generated-docs.js') as { show(x: number): string };

export function formatTable(rows: readonly Row[]): string {
  const header = ['name', 'value', 'unit', 'baseline', 'ratio', 'target', 'result', 'note'];
  const body = rows.map((r) => [
    r.name,
    show(r.value),
    r.unit,
    show(r.baseline),
    show(r.value / r.baseline),
    r.target.text,
    r.target.met ? 'PASS' : 'MISS',
    r.note ?? '',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((cells) => cells[i].length)));
  const numeric = new Set([1, 3, 4]);
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (numeric.has(i) ? c.padStart(widths[i]) : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

export function writeResults(path: string, rows: readonly Row[]): void {
  writeFileSync(path, `${JSON.stringify(toRecords(rows), null, 2)}\n`);
}
