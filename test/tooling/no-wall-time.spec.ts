import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

/**
 * No test asserts wall time (how long something took, or a clock reading against a bound): a loaded machine breaks such
 * an assertion without a fault, and a fast one hides a slow path. A test asserts what a bound is about (the refusal, the
 * count of steps, the order of events); speeds are `npm run bench`'s rows. This spec reads every spec file and store
 * contract and names, file:line, each comparison (toBeLessThan, toBeGreaterThan, their OrEqual forms, toBeCloseTo, or
 * `expect(a < b).toBe(...)`) whose expect() or matcher argument holds a clock read (Date.now(), performance.now(),
 * process.hrtime, new Date() without an argument), a variable assigned from one in the same file, or a name that reads as
 * a time: elapsed, took, duration, started, waited, t0, at, or one ending in Ms, At or _at.
 */

const ROOT = join(__dirname, '..', '..');
const SPEC = /\.(spec|db-spec|e2e-spec|pg-spec|chaos-spec|browser-spec)\.ts$/;
const COMPARISONS = new Set(['toBeLessThan', 'toBeLessThanOrEqual', 'toBeGreaterThan', 'toBeGreaterThanOrEqual', 'toBeCloseTo']);
const TIME_NAME = /^(elapsed|took|duration|started|waited|t0|at)$|(Elapsed|Took|Duration|Started|Waited|Ms|At|_at)$/;

/**
 * The comparisons allowed anyway, each of timestamps the database stored, against each other, for their order or the
 * span between them (not a speed): `file` and a piece of the line's text.
 */
const ALLOWED: ReadonlyArray<{ readonly file: string; readonly text: string; readonly why: string }> = [
  {
    file: 'libs/agent/src/jobs/agent-jobs.module.db-spec.ts',
    text: 'r.expires_at as Date).getTime() - new Date(r.created_at)',
    why: 'the expiry a boot gave to jobs stored before it, against their stored creation: two stored times, the later at least the lifetime after the earlier',
  },
];

/** Every spec file and every store contract (libs/<name>/src/testing/*.ts) of the repository. */
function specFiles(): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (SPEC.test(entry.name) || /^libs\/[^/]+\/src\/testing\/[^/]+\.ts$/.test(relative(ROOT, path))) found.push(path);
    }
  };
  for (const top of ['libs', 'test', 'apps']) walk(join(ROOT, top));
  return found.sort();
}

function isClockRead(node: ts.Node): boolean {
  if (ts.isCallExpression(node)) {
    const callee = node.expression.getText();
    if (/^(Date|performance)\.now$/.test(callee) || /(^|\.)hrtime(\.bigint)?$/.test(callee)) return true;
  }
  return ts.isNewExpression(node) && node.expression.getText() === 'Date' && (node.arguments?.length ?? 0) === 0;
}

function some(node: ts.Node, test: (n: ts.Node) => boolean, intoFunctions = true): boolean {
  if (test(node)) return true;
  if (!intoFunctions && ts.isFunctionLike(node)) return false;
  return ts.forEachChild(node, (child) => (some(child, test, intoFunctions) ? true : undefined)) ?? false;
}

/** The names a file assigns a clock read to (`const started = Date.now()`, `before = performance.now() - x`). */
function clockNames(file: ts.SourceFile): Set<string> {
  const names = new Set<string>();
  const visit = (node: ts.Node) => {
    // A function that reads the clock is not a time itself (what it returns is judged where it is compared).
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer && some(node.initializer, isClockRead, false))
      names.add(node.name.text);
    if (
      ts.isBinaryExpression(node) &&
      node.operatorToken.kind === ts.SyntaxKind.EqualsToken &&
      ts.isIdentifier(node.left) &&
      some(node.right, isClockRead, false)
    )
      names.add(node.left.text);
    ts.forEachChild(node, visit);
  };
  visit(file);
  return names;
}

/** Why `node` reads as a time, or null. */
function timeIn(node: ts.Node, clocked: Set<string>): string | null {
  let why: string | null = null;
  some(node, (n) => {
    if (isClockRead(n)) why = `a clock read (${n.getText()})`;
    else if (ts.isIdentifier(n) && clocked.has(n.text)) why = `'${n.text}', assigned from a clock read`;
    else if (ts.isIdentifier(n) && TIME_NAME.test(n.text)) why = `'${n.text}', named as a time`;
    return why !== null;
  });
  return why;
}

/** The `expect(...)` call at the root of a matcher chain (`expect(x).not.toBeLessThan`), or null. */
function expectOf(node: ts.Expression): ts.CallExpression | null {
  let e: ts.Expression = node;
  while (ts.isPropertyAccessExpression(e) || ts.isCallExpression(e)) {
    if (ts.isCallExpression(e) && ts.isIdentifier(e.expression) && e.expression.text === 'expect') return e;
    e = ts.isPropertyAccessExpression(e) ? e.expression : e.expression;
  }
  return null;
}

const RELATIONS = new Set([
  ts.SyntaxKind.LessThanToken,
  ts.SyntaxKind.LessThanEqualsToken,
  ts.SyntaxKind.GreaterThanToken,
  ts.SyntaxKind.GreaterThanEqualsToken,
]);

/** Each wall-time comparison of `text` (the source of `path`, relative to the repository) as `path:line: what`. */
export function wallTimeAssertions(path: string, text: string): string[] {
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const clocked = clockNames(file);
  const lines = text.split('\n');
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const matcher = node.expression.name.text;
      const expectCall = expectOf(node.expression.expression);
      if (expectCall) {
        const subject = expectCall.arguments[0];
        let why: string | null = null;
        if (COMPARISONS.has(matcher)) why = [subject, ...node.arguments].map((a) => (a ? timeIn(a, clocked) : null)).find(Boolean) ?? null;
        else if (subject && ts.isBinaryExpression(subject) && RELATIONS.has(subject.operatorToken.kind)) why = timeIn(subject, clocked);
        if (why) {
          const line = file.getLineAndCharacterOfPosition(node.getStart()).line;
          const source = lines[line];
          if (!ALLOWED.some((a) => a.file === path && source.includes(a.text)))
            found.push(`${path}:${line + 1}: ${matcher} on ${why}: ${source.trim()}`);
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

describe('no assertion on wall time in the tests', () => {
  it('finds none in any spec file or store contract', () => {
    const files = specFiles();
    // The scan sees the suites of every kind (a broken walk would find nothing and pass).
    const kinds = ['spec', 'db-spec', 'e2e-spec', 'pg-spec', 'chaos-spec', 'browser-spec'];
    expect(kinds.filter((kind) => !files.some((f) => f.endsWith(`.${kind}.ts`)))).toEqual([]);
    expect(files).toContain(join(ROOT, 'libs/outbox/src/testing/outbox-store.contract.ts'));
    const found = files.flatMap((f) => wallTimeAssertions(relative(ROOT, f), readFileSync(f, 'utf8')));
    expect(found).toEqual([]);
  });

  it('flags the forms a wall-time assertion takes, naming file and line, and leaves counts, sizes and stored order alone', () => {
    const probe = [
      "it('probe', async () => {",
      '  const started = Date.now();',
      '  const t0 = performance.now();',
      '  let before = 0;',
      '  before = Date.now();',
      '  const r = await work();',
      '  expect(Date.now() - started).toBeLessThan(2000);',
      '  expect(performance.now() - t0).not.toBeGreaterThan(5);',
      '  expect(outcome.waitedMs).toBeLessThan(1500);',
      '  expect(r.doneAt).toBeGreaterThanOrEqual(before);',
      '  expect(elapsed < 100).toBe(true);',
      '  expect(Number(process.hrtime.bigint() - start)).toBeLessThan(1e9);',
      '  expect(row.expires_at).toBeGreaterThan(new Date());',
      '  expect(r.rows.length).toBeLessThan(30);',
      '  expect(ticks).toBeGreaterThanOrEqual(3);',
      '  expect(r.tokens).toBeGreaterThan(0);',
      '  expect(r.timeoutMs).toBe(300);',
      '  for (let i = 1; i < seen.length; i++) expect(seen[i].at - seen[i - 1].at).toBeGreaterThanOrEqual(900);',
      '});',
    ].join('\n');
    expect(wallTimeAssertions('probe.spec.ts', probe).map((f) => f.replace(/: .*/, ''))).toEqual(
      [7, 8, 9, 10, 11, 12, 13, 18].map((line) => `probe.spec.ts:${line}`),
    );
    expect(wallTimeAssertions('probe.spec.ts', probe)[0]).toBe(
      'probe.spec.ts:7: toBeLessThan on a clock read (Date.now()): expect(Date.now() - started).toBeLessThan(2000);',
    );
    // The allowlist holds only comparisons of stored times, each with its reason, and each still in its file.
    for (const a of ALLOWED) {
      expect(a.why.length).toBeGreaterThan(20);
      expect(readFileSync(join(ROOT, a.file), 'utf8')).toContain(a.text);
    }
  });
});
