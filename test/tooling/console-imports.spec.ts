import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const CONSOLE_SRC = join(ROOT, 'libs', 'admin', 'console', 'src');

/** Every module specifier a TypeScript file imports or re-exports. */
function specifiers(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const m of text.matchAll(/^\s*(?:import|export)\b[^'"]*?\bfrom\s+['"]([^'"]+)['"]/gm)) found.push(m[1]);
  for (const m of text.matchAll(/^\s*import\s+['"]([^'"]+)['"]/gm)) found.push(m[1]);
  return found;
}

function resolveRelative(from: string, spec: string): string {
  const base = resolve(dirname(from), spec);
  if (existsSync(base) && statSync(base).isFile()) return base; // a stylesheet or an asset
  for (const candidate of [`${base}.ts`, `${base}.tsx`, join(base, 'index.ts')]) if (existsSync(candidate)) return candidate;
  throw new Error(`${relative(ROOT, from)} imports ${spec}, which resolves to no file`);
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : /\.tsx?$/.test(name) ? [path] : [];
  });
}

// The console type-checks (npm run lint, before npm run build) against server types it reads from the libraries'
// sources. A server file it reaches that imports a package (`@zmodu/skills`, ...) resolves to that package's built
// `dist`, which a clean clone does not have yet: lint then fails there and nowhere else.
describe('the approvals console reads server types without the packages being built', () => {
  it('reaches, through its relative imports outside its own folder, only files that import no package', () => {
    const outside = new Set<string>();
    const queue: string[] = [];
    for (const file of walk(CONSOLE_SRC)) {
      for (const spec of specifiers(file)) {
        if (!spec.startsWith('.')) continue;
        const target = resolveRelative(file, spec);
        if (!target.startsWith(CONSOLE_SRC)) queue.push(target);
      }
    }
    expect(queue.length).toBeGreaterThan(0);
    const offenders: string[] = [];
    while (queue.length > 0) {
      const file = queue.pop() as string;
      if (outside.has(file) || !/\.tsx?$/.test(file)) continue;
      outside.add(file);
      for (const spec of specifiers(file)) {
        if (spec.startsWith('.')) queue.push(resolveRelative(file, spec));
        else offenders.push(`${relative(ROOT, file)} imports ${spec}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
