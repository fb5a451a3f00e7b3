// The figures of the docs that come from a run: docs/generated/benchmarks.md (npm run bench -- --record) and
// docs/generated/package-sizes.md (npm run docs:sizes, from the dist/packages-report.json that npm run test:packages
// writes). Each page embeds the data it was rendered from, as JSON in a comment on its last line, and
// test/tooling/generated-docs.spec.ts renders every page again from its data and fails when the text differs: a figure
// typed into a page by hand fails the build. Write these pages only through this module.
//
//   node scripts/generated-docs.js sizes [dist/packages-report.json]
const { existsSync, mkdirSync, readFileSync, writeFileSync } = require('node:fs');
const os = require('node:os');
const { dirname, join, resolve } = require('node:path');

const ROOT = join(__dirname, '..');
const GENERATED = join(ROOT, 'docs', 'generated');
const MARK = '<!-- zmodu-generated ';

const PAGES = {
  benchmarks: { file: 'benchmarks.md', render: renderBenchmarks },
  'package-sizes': { file: 'package-sizes.md', render: renderPackageSizes },
};

/** The machine a figure was measured on (what a reader needs to weigh it). */
function machine() {
  const cpus = os.cpus();
  return {
    node: process.version,
    platform: `${process.platform}/${process.arch}`,
    cpus: cpus.length,
    cpu: (cpus[0] && cpus[0].model.trim()) || 'unknown',
    load1: Math.round(os.loadavg()[0] * 100) / 100,
  };
}

function today() {
  return new Date().toISOString().slice(0, 10);
}

function pagePath(kind, dir = GENERATED) {
  if (!Object.hasOwn(PAGES, kind))
    throw new Error(`unknown generated page ${JSON.stringify(kind)} (pages: ${Object.keys(PAGES).join(', ')})`);
  return join(dir, PAGES[kind].file);
}

/** The text of a page for its data: a header saying where it comes from, the body, and the data itself. */
function render(kind, data) {
  if (!Object.hasOwn(PAGES, kind)) throw new Error(`unknown generated page ${JSON.stringify(kind)}`);
  const body = PAGES[kind].render(data);
  return `${body.trimEnd()}\n\n${MARK}${JSON.stringify({ kind, data })} -->\n`;
}

/** The data a page was rendered from, or null when there is no page yet. A page without its data line is an error. */
function readData(kind, dir = GENERATED) {
  const path = pagePath(kind, dir);
  if (!existsSync(path)) return null;
  return parsePage(readFileSync(path, 'utf8'), path).data;
}

function parsePage(text, where) {
  const lines = text.trimEnd().split('\n');
  const last = lines[lines.length - 1] ?? '';
  if (!last.startsWith(MARK) || !last.endsWith(' -->'))
    throw new Error(`${where}: its last line must be the data it was rendered from (${MARK}...); write it with scripts/generated-docs.js`);
  const parsed = JSON.parse(last.slice(MARK.length, -' -->'.length));
  if (!parsed || typeof parsed !== 'object' || !Object.hasOwn(PAGES, parsed.kind)) throw new Error(`${where}: unknown page kind`);
  return parsed;
}

function write(kind, data, dir = GENERATED) {
  const path = pagePath(kind, dir);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, render(kind, data));
  return path;
}

/**
 * Merges a bench run's rows into docs/generated/benchmarks.md: a row keeps the figures of the last run that measured
 * it, with that run's date and machine, so that `--only mcp --record` replaces the MCP rows and leaves the others.
 */
function recordBench(rows, options = {}) {
  const dir = options.dir ?? GENERATED;
  const previous = readData('benchmarks', dir) ?? { runs: [], rows: [] };
  const run = { id: previous.runs.reduce((m, r) => Math.max(m, r.id), 0) + 1, date: options.date ?? today(), ...machine(), ...options.run };
  const names = new Set(rows.map((r) => r.name));
  const kept = previous.rows.filter((r) => !names.has(r.name));
  const fresh = rows.map((r) => ({
    name: r.name,
    value: r.value,
    unit: r.unit,
    baseline: r.baseline,
    ratio: r.baseline === 0 ? null : r.value / r.baseline,
    target: r.target.text,
    met: r.target.met,
    note: r.note ?? '',
    run: run.id,
  }));
  // Rows in the order of the previous page, new ones at the end of their run.
  const order = previous.rows.map((r) => r.name);
  const all = [...kept, ...fresh].sort((a, b) => rank(order, a.name) - rank(order, b.name));
  const used = new Set(all.map((r) => r.run));
  const runs = [...previous.runs, run].filter((r) => used.has(r.id));
  return write('benchmarks', { runs, rows: all }, dir);
}

function rank(order, name) {
  const i = order.indexOf(name);
  return i < 0 ? Number.MAX_SAFE_INTEGER : i;
}

function show(x) {
  if (x === null || x === undefined || !Number.isFinite(x)) return String(x);
  const abs = Math.abs(x);
  if (abs >= 1000) return Math.round(x).toLocaleString('en-US');
  if (abs >= 100) return x.toFixed(1);
  if (abs >= 1) return x.toFixed(2);
  if (abs >= 0.01) return x.toFixed(3);
  return x.toPrecision(3);
}

function cell(text) {
  return String(text).replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

function table(header, rows) {
  return [
    `| ${header.join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`),
  ].join('\n');
}

function renderBenchmarks(data) {
  const runs = new Map(data.runs.map((r) => [r.id, r]));
  const runLine = (r) =>
    `- run ${r.id}: ${r.date}, Node ${r.node}, ${r.platform}, ${r.cpus} x ${r.cpu}, load average ${r.load1} at the start${r.only ? `, \`--only ${r.only}\`` : ''}`;
  return [
    '# Benchmarks (generated)',
    '',
    'Written by `npm run bench -- --record` (scripts/generated-docs.js); do not edit: `test/tooling/generated-docs.spec.ts`',
    'renders this page again from the data on its last line and fails when the text differs. Each row is from the last',
    'run that measured it; the ratio is ours over the peer measured in the same run (the absolute times swing between',
    'runs on a shared machine; the ratios are what count). What each row measures:',
    '[docs/development/benchmarks.md](../development/benchmarks.md#benchmarks).',
    '',
    '## Runs',
    '',
    ...data.runs.map(runLine),
    '',
    '## Rows',
    '',
    table(
      ['Measure', 'zmodu', 'Peer (baseline)', 'Unit', 'Ratio', 'Target', 'Met', 'Run'],
      data.rows.map((r) => [
        r.name + (r.note ? ` (${r.note})` : ''),
        show(r.value),
        show(r.baseline),
        r.unit,
        show(r.ratio),
        r.target,
        r.met ? 'yes' : 'no',
        `${runs.get(r.run)?.date ?? '?'} (run ${r.run})`,
      ]),
    ),
  ].join('\n');
}

const APP_TEXT = {
  minimal: '`@zmodu/agent`, `guard`, `skills`, `db`, `@nestjs/common`, `core`, `typeorm`, TypeORM',
  'nest12-esm': "every package, Nest 12 with swagger and terminus, and CLI 12's dev tools (Vitest, TypeScript 6)",
  'nest11-cjs': "every package, Nest 11 with swagger and terminus, and CLI 11's dev tools (jest, ESLint, TypeScript 5)",
  mcp: 'the minimal four, `@zmodu/mcp`, `@nestjs/platform-express`, both MCP SDKs (v2) and zod',
};

function renderPackageSizes(data) {
  const apps = Object.keys(data.apps);
  const min = data.apps.minimal;
  return [
    '# Installed sizes (generated)',
    '',
    'Written by `npm run docs:sizes` from the `dist/packages-report.json` of a `npm run test:packages` run',
    '(scripts/generated-docs.js); do not edit: `test/tooling/generated-docs.spec.ts` renders this page again from the',
    'data on its last line and fails when the text differs.',
    '',
    `Measured ${data.date} with npm ${data.npm ?? '?'} on Node ${data.node} (${data.platform}); the apps are in`,
    '`examples/approvals` (nest12-esm), `examples/minimal`, `examples/mcp` and `test/fixtures/apps/nest11-cjs`, each',
    'installed from the packed tarballs without `--legacy-peer-deps`.',
    '',
    table(
      ['App', '`du -sb node_modules`', 'Packages', 'What it installs'],
      apps.map((a) => [
        `\`${a}\``,
        `${data.apps[a].mib} MiB`,
        String(data.apps[a].packages),
        Object.hasOwn(APP_TEXT, a) ? APP_TEXT[a] : '',
      ]),
    ),
    '',
    min
      ? `The minimal app's target is at most ${data.minimalTargetMiB} MiB: ${min.mib <= data.minimalTargetMiB ? 'met' : 'missed'} (${min.mib} MiB).`
      : '',
  ].join('\n');
}

/** The sizes page from a packages report (dist/packages-report.json), dated today. */
function recordSizes(reportPath, options = {}) {
  const report = JSON.parse(readFileSync(reportPath, 'utf8'));
  if (!report || typeof report.apps !== 'object') throw new Error(`${reportPath}: no apps in it; run npm run test:packages first`);
  const m = machine();
  const apps = Object.fromEntries(Object.entries(report.apps).map(([name, a]) => [name, { mib: a.mib, packages: a.packages }]));
  return write(
    'package-sizes',
    {
      date: report.date ?? today(),
      node: report.node ?? m.node,
      npm: report.npm ?? null,
      platform: m.platform,
      minimalTargetMiB: report.minimalTargetMiB,
      apps,
    },
    options.dir ?? GENERATED,
  );
}

module.exports = { GENERATED, PAGES, pagePath, parsePage, render, readData, recordBench, recordSizes, show };

if (require.main === module) {
  const [what, arg] = process.argv.slice(2);
  if (what === 'sizes') {
    const path = resolve(arg ?? join(ROOT, 'dist', 'packages-report.json'));
    if (!existsSync(path)) {
      console.error(`${path} does not exist: run npm run test:packages first (it writes the sizes there)`);
      process.exit(1);
    }
    console.log(`wrote ${recordSizes(path)}`);
  } else {
    console.error('usage: node scripts/generated-docs.js sizes [dist/packages-report.json]');
    process.exit(2);
  }
}
