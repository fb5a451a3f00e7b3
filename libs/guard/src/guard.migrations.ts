import { registerMigrations } from '@zmodu/core';
import { ZmoduGuard1764460800000 } from './migrations/1764460800000-zmodu-guard';
import { ZmoduGuardStaged1764480000000 } from './migrations/1764480000000-zmodu-guard-staged';
import { ZmoduGuardFairUse1764500000000 } from './migrations/1764500000000-zmodu-guard-fair-use';
import { ZmoduGuardAuditChain1764520000000 } from './migrations/1764520000000-zmodu-guard-audit-chain';
import { ZmoduGuardAuditPayload1764540000000 } from './migrations/1764540000000-zmodu-guard-audit-payload';
import { ZmoduGuardAuditIntents1764620000000 } from './migrations/1764620000000-zmodu-guard-audit-intents';

/** The guard's tables (audit log, dead letters, token usage), in order. `zmoduMigrations()` includes them once @zmodu/guard is loaded. */
export const ZMODU_GUARD_MIGRATIONS = registerMigrations('@zmodu/guard', [
  ZmoduGuard1764460800000,
  ZmoduGuardStaged1764480000000,
  ZmoduGuardFairUse1764500000000,
  ZmoduGuardAuditChain1764520000000,
  ZmoduGuardAuditPayload1764540000000,
  ZmoduGuardAuditIntents1764620000000,
]);
