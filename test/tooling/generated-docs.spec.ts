import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// The figures the docs give from a run are generated pages (scripts/generated-docs.js): each embeds its data, and
// renders again to itself. A figure typed into a page by hand, or a page written another way, fails here.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const generated = require('../../scripts/generated-docs.js') as {
  GENERATED: string;
  PAGES: Record<string, { file: string }>;
  pagePath(kind: string, dir?: string): string;
  parsePage(text: string, where: string): { kind: string; data: unknown };
  render(kind: string, data: unknown): string;
  readData(
    kind: string,
    dir?: string,
  ): { runs: { id: number; date: string; only?: string }[]; rows: { name: string; value: number; run: number }[] } | null;
  recordBench(rows: readonly BenchRow[], options?: { dir?: string; date?: string; run?: Record<string, unknown> }): string;
  recordSizes(reportPath: string, options?: { dir?: string }): string;
};

interface BenchRow {
  name: string;
  value: number;
  unit: string;
  baseline: number;
  target: { text: string; met: boolean };
  note?: string;
}

const row = (name: string, value: number, baseline: number): BenchRow => ({
  name,
  value,
  unit: 'ms',
  baseline,
  target: { text: 'at most 2', met: value / baseline <= 2 },
});

describe('generated docs', () => {
  const pages = existsSync(generated.GENERATED) ? readdirSync(generated.GENERATED).filter((f) => f.endsWith('.md')) : [];

  it('holds the pages of both runs (the benchmarks and the installed sizes)', () => {
    expect(pages.sort()).toEqual(
      Object.values(generated.PAGES)
        .map((p) => p.file)
        .sort(),
    );
  });

  it.each(pages)('%s renders again, from the data on its last line, to exactly its text (nothing typed by hand)', (file) => {
    const path = join(generated.GENERATED, file);
    const text = readFileSync(path, 'utf8');
    const { kind, data } = generated.parsePage(text, path);
    expect(generated.pagePath(kind)).toBe(path);
    expect(generated.render(kind, data)).toBe(text);
  });

  describe('the mechanism', () => {
    let dir: string;
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'zmodu-generated-'));
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it('a figure edited by hand no longer renders to the page', () => {
      const path = generated.recordBench([row('guard.check', 40, 20)], { dir, date: '2026-12-03' });
      const text = readFileSync(path, 'utf8');
      expect(text).toContain('| guard.check | 40.00 | 20.00 | ms | 2.00 | at most 2 | yes | 2026-12-03 (run 1) |');
      const edited = text.replace('| 40.00 |', '| 30.00 |');
      const { kind, data } = generated.parsePage(edited, path);
      expect(generated.render(kind, data)).not.toBe(edited);
    });

    it('a page without its data line is refused, saying how to write it', () => {
      expect(() => generated.parsePage('# Benchmarks\n\n| a | b |\n', 'x.md')).toThrow(/write it with scripts\/generated-docs\.js/);
    });

    it('a run with --only replaces the rows it measured, keeps the others with their run, and drops runs no row cites', () => {
      generated.recordBench([row('a', 1, 1), row('b', 2, 1)], { dir, date: '2026-12-01' });
      generated.recordBench([row('b', 3, 1)], { dir, date: '2026-12-02', run: { only: 'b' } });
      let data = generated.readData('benchmarks', dir)!;
      expect(data.rows.map((r) => [r.name, r.value, r.run])).toEqual([
        ['a', 1, 1],
        ['b', 3, 2],
      ]);
      expect(data.runs.map((r) => [r.id, r.date, r.only])).toEqual([
        [1, '2026-12-01', undefined],
        [2, '2026-12-02', 'b'],
      ]);
      generated.recordBench([row('a', 4, 1), row('c', 5, 1)], { dir, date: '2026-12-03' });
      data = generated.readData('benchmarks', dir)!;
      expect(data.rows.map((r) => [r.name, r.run])).toEqual([
        ['a', 3],
        ['b', 2],
        ['c', 3],
      ]);
      expect(data.runs.map((r) => r.id)).toEqual([2, 3]);
      const text = readFileSync(generated.pagePath('benchmarks', dir), 'utf8');
      expect(generated.render('benchmarks', generated.parsePage(text, 'page').data)).toBe(text);
    });

    it('the sizes page says whether the minimal app meets its target', () => {
      const report = join(dir, 'report.json');
      const apps = (mib: number) => ({
        minimal: { bytes: 1, mib, packages: 80 },
        'nest12-esm': { bytes: 2, mib: 250, packages: 400 },
      });
      writeFileSync(report, JSON.stringify({ date: '2026-12-03', node: 'v24.0.0', npm: '11.0.0', minimalTargetMiB: 60, apps: apps(59.9) }));
      let text = readFileSync(generated.recordSizes(report, { dir }), 'utf8');
      expect(text).toContain('| `minimal` | 59.9 MiB | 80 |');
      expect(text).toContain("The minimal app's target is at most 60 MiB: met (59.9 MiB).");
      writeFileSync(report, JSON.stringify({ date: '2026-12-03', node: 'v24.0.0', npm: '11.0.0', minimalTargetMiB: 60, apps: apps(60.6) }));
      text = readFileSync(generated.recordSizes(report, { dir }), 'utf8');
      expect(text).toContain('missed (60.6 MiB)');
    });

    it('an unknown page kind is refused (own keys only)', () => {
      expect(() => generated.render('__proto__', {})).toThrow(/unknown generated page/);
      expect(() => generated.pagePath('toString')).toThrow(/unknown generated page/);
    });
  });
});
