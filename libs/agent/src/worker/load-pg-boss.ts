import type { PgBoss } from 'pg-boss';
import { PG_BOSS_BROKEN_MESSAGE, PG_BOSS_ESM_MESSAGE, PG_BOSS_MISSING_MESSAGE, PG_BOSS_VERSION_MESSAGE } from '../agent.messages';
import { safeText } from '../error-text';
import { PgBossRequiredException } from '../exceptions/pg-boss-required.exception';
import { PackageResolver, PG_BOSS_RANGE } from './pg-boss-peer';

/** The major and the lowest minor of PG_BOSS_RANGE (a caret range). */
const [MAJOR, MIN_MINOR] = PG_BOSS_RANGE.slice(1).split('.').map(Number);

/** The PgBoss class of pg-boss 12. */
export type PgBossClass = typeof PgBoss;

// eslint-disable-next-line @typescript-eslint/no-require-imports
const nodeRequire: PackageResolver = (name) => require(name);

/**
 * pg-boss, loaded when cluster mode is configured (never otherwise: @zmodu/agent runs without it). Throws
 * PgBossRequiredException, saying what to install or run, when it is missing, of another version, or not loadable.
 */
export function loadPgBoss(resolve: PackageResolver = nodeRequire): PgBossClass {
  let found: unknown;
  try {
    found = resolve('pg-boss');
  } catch (err) {
    const code = (err as { code?: unknown } | null)?.code;
    const message = safeText(err);
    if ((code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND') && /Cannot find (module|package) 'pg-boss'/.test(message))
      throw new PgBossRequiredException(PG_BOSS_MISSING_MESSAGE(PG_BOSS_RANGE), PG_BOSS_RANGE, null);
    if (code === 'ERR_REQUIRE_ESM')
      throw new PgBossRequiredException(PG_BOSS_ESM_MESSAGE(PG_BOSS_RANGE, process.version), PG_BOSS_RANGE, versionOf(resolve));
    throw new PgBossRequiredException(PG_BOSS_BROKEN_MESSAGE(PG_BOSS_RANGE, message), PG_BOSS_RANGE, versionOf(resolve));
  }
  const version = versionOf(resolve);
  const [major, minor] = (version ?? '').split('.').map(Number);
  const PgBossClass = (found as { PgBoss?: unknown } | null)?.PgBoss;
  if (major !== MAJOR || !(minor >= MIN_MINOR) || typeof PgBossClass !== 'function')
    throw new PgBossRequiredException(PG_BOSS_VERSION_MESSAGE(PG_BOSS_RANGE, version ?? 'of an unknown version'), PG_BOSS_RANGE, version);
  return PgBossClass as PgBossClass;
}

/** The installed pg-boss's version, from its package.json (null when it cannot be read). */
function versionOf(resolve: PackageResolver): string | null {
  try {
    const manifest = resolve('pg-boss/package.json') as { version?: unknown } | null;
    return typeof manifest?.version === 'string' ? manifest.version : null;
  } catch {
    return null;
  }
}
