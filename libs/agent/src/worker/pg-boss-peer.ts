/**
 * pg-boss as @zmodu/agent declares it: an optional peer dependency, loaded by cluster mode only (see load-pg-boss.ts).
 * Nothing here refers to pg-boss's own types, so the declarations of @zmodu/agent compile where pg-boss is not installed.
 */

/** The pg-boss versions cluster mode runs on (the package's peerDependencies say the same). */
export const PG_BOSS_RANGE = '^12.38.0';

/** What needs pg-boss, in the boot error when it is missing. */
export const CLUSTER_MODE = "cluster mode (queue.driver 'pg-boss')";
