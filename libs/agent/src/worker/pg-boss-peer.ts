/**
 * pg-boss as @zmodu/agent declares it: an optional peer dependency, loaded by cluster mode only (see load-pg-boss.ts).
 * Nothing here refers to pg-boss's own types, so the declarations of @zmodu/agent compile where pg-boss is not installed.
 */

/** The pg-boss versions cluster mode runs on (the package's peerDependencies say the same). */
export const PG_BOSS_RANGE = '^12.38.0';

/**
 * How a package is loaded: Node's `require` (pg-boss 12 is an ES module, which CommonJS loads through require(esm),
 * Node >= 22.12). Tests pass their own to see what happens without pg-boss, without uninstalling it.
 */
export type PackageResolver = (name: string) => unknown;
