// The one list of our packages: every libs/*/package.json and apps/cli's, with the @zmodu packages each declares
// (dependencies and peers). The build order, jest's module map, the import-direction lint rule and the packages test
// are derived from it, and test/tooling/libraries.spec.ts checks tsconfig.json's paths against it, so that what is
// built, tested and allowed cannot drift from what ships.
const { existsSync, readdirSync, readFileSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');

/** Every package of the repository: { dir, name, short, deps (short names of @zmodu packages it declares), testing }. */
function packages() {
  const dirs = [
    ...readdirSync(join(root, 'libs'))
      .sort()
      .map((d) => `libs/${d}`),
    'apps/cli',
  ].filter((dir) => existsSync(join(root, dir, 'package.json')));
  return dirs.map((dir) => {
    const pkg = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8'));
    if (typeof pkg.name !== 'string' || !pkg.name.startsWith('@zmodu/'))
      throw new Error(`${dir}/package.json: the name must be @zmodu/<name>`);
    const declared = Object.keys({ ...(pkg.dependencies ?? {}), ...(pkg.peerDependencies ?? {}) });
    return {
      dir,
      name: pkg.name,
      short: pkg.name.slice('@zmodu/'.length),
      deps: declared.filter((n) => n.startsWith('@zmodu/')).map((n) => n.slice('@zmodu/'.length)),
      testing: Boolean(pkg.exports && Object.hasOwn(pkg.exports, './testing')),
    };
  });
}

/** The libraries (libs/*) only. */
function libraries() {
  return packages().filter((p) => p.dir.startsWith('libs/'));
}

/** The packages in an order where each comes after every package it declares (ties by name); a cycle is an error. */
function buildOrder(list = packages()) {
  const byShort = new Map(list.map((p) => [p.short, p]));
  for (const p of list)
    for (const d of p.deps) if (!byShort.has(d)) throw new Error(`${p.name} declares @zmodu/${d}, which is no package of the repository`);
  const placed = new Set();
  const order = [];
  while (order.length < list.length) {
    const ready = list.filter((p) => !placed.has(p.short) && p.deps.every((d) => placed.has(d)));
    if (ready.length === 0)
      throw new Error(
        `the @zmodu packages depend on each other in a cycle: ${list
          .filter((p) => !placed.has(p.short))
          .map((p) => p.name)
          .join(', ')}`,
      );
    for (const p of ready.sort((a, b) => a.short.localeCompare(b.short))) {
      placed.add(p.short);
      order.push(p);
    }
  }
  return order;
}

module.exports = { packages, libraries, buildOrder };
