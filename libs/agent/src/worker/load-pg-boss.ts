import { loadOptionalPeer, OptionalPeerUnavailableException } from '@zmodu/core';
import type { PgBoss } from 'pg-boss';
import { CLUSTER_MODE, PG_BOSS_RANGE } from './pg-boss-peer';

/** The major and the lowest minor of PG_BOSS_RANGE (a caret range). */
const [MAJOR, MIN_MINOR] = PG_BOSS_RANGE.slice(1).split('.').map(Number);
const INSTALL = `pg-boss@${PG_BOSS_RANGE}`;

/** The PgBoss class of pg-boss 12. */
export type PgBossClass = typeof PgBoss;

/**
 * pg-boss, loaded when cluster mode is configured (PgBossGoalQueue's constructor, at boot; never otherwise, so an
 * application on the in-process queue runs without it). pg-boss 12 is an ES module: CommonJS loads it through Node's
 * require(esm) (Node >= 22.12). Throws OptionalPeerUnavailableException when it is not installed ("cluster mode
 * (queue.driver 'pg-boss') needs the pg-boss package: npm install pg-boss@^12.38.0"), of another version, or not
 * loadable. Loaded through loadOptionalPeer, so `simulateMissingPeers('pg-boss')` (`@zmodu/guard/testing`) takes it away.
 */
export function loadPgBoss(): PgBossClass {
  const found = loadOptionalPeer('pg-boss', CLUSTER_MODE, requirePgBoss, { install: INSTALL });
  const version = versionOf();
  const [major, minor] = (version ?? '').split('.').map(Number);
  const PgBossClass = (found as { PgBoss?: unknown } | null)?.PgBoss;
  if (major !== MAJOR || !(minor >= MIN_MINOR) || typeof PgBossClass !== 'function')
    throw new OptionalPeerUnavailableException(
      'pg-boss',
      CLUSTER_MODE,
      INSTALL,
      false,
      `pg-boss ${version ?? 'of an unknown version'} is installed, and cluster mode runs on ${PG_BOSS_RANGE}`,
    );
  return PgBossClass as PgBossClass;
}

function requirePgBoss(): unknown {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('pg-boss');
  } catch (err) {
    throw explainLoadError(err);
  }
}

/** A Node that cannot require an ES module (before 22.12) is not a broken install but an older Node: say so. */
export function explainLoadError(err: unknown): unknown {
  if ((err as { code?: unknown } | null)?.code !== 'ERR_REQUIRE_ESM') return err;
  return new Error(`pg-boss 12 is an ES module, which Node ${process.version} cannot require: run Node >= 22.12`);
}

/** The installed pg-boss's version, from its package.json (null when it cannot be read). */
function versionOf(): string | null {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const manifest = loadOptionalPeer('pg-boss/package.json', CLUSTER_MODE, () => require('pg-boss/package.json') as unknown);
    const version = (manifest as { version?: unknown } | null)?.version;
    return typeof version === 'string' ? version : null;
  } catch {
    return null;
  }
}
