import { AuditDeadLetterEntity } from './audit/audit-dead-letter.entity';
import { AuditLogEntity } from './audit/audit-log.entity';
import { ZmoduGuard1764460800000 } from './migrations/1764460800000-zmodu-guard';
import { ZmoduGuardStaged1764480000000 } from './migrations/1764480000000-zmodu-guard-staged';
import { ZmoduGuardFairUse1764500000000 } from './migrations/1764500000000-zmodu-guard-fair-use';
import { ZmoduGuardAuditChain1764520000000 } from './migrations/1764520000000-zmodu-guard-audit-chain';
import { ZmoduGuardAuditPayload1764540000000 } from './migrations/1764540000000-zmodu-guard-audit-payload';
import { ZmoduGuardAuditIntents1764620000000 } from './migrations/1764620000000-zmodu-guard-audit-intents';
import { TokenUsageEntity } from './quota/token-usage.entity';
import { TokenUserUsageEntity } from './quota/token-user-usage.entity';

/** Add these to your TypeORM DataSource `entities`. */
export const ZMODU_GUARD_ENTITIES = [AuditLogEntity, AuditDeadLetterEntity, TokenUsageEntity, TokenUserUsageEntity];
/** Add these to your TypeORM DataSource `migrations`. */
export const ZMODU_GUARD_MIGRATIONS = [
  ZmoduGuard1764460800000,
  ZmoduGuardStaged1764480000000,
  ZmoduGuardFairUse1764500000000,
  ZmoduGuardAuditChain1764520000000,
  ZmoduGuardAuditPayload1764540000000,
  ZmoduGuardAuditIntents1764620000000,
];
