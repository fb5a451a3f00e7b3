import { ApprovalDecisionEntity } from './entities/approval-decision.entity';
import { ProposalEntity } from './entities/proposal.entity';
import { ZmoduPipeline1764461100000 } from './migrations/1764461100000-zmodu-pipeline';
import { ZmoduPipelineVersions1764480100000 } from './migrations/1764480100000-zmodu-pipeline-versions';
import { ZmoduPipelineRunIndex1764600000000 } from './migrations/1764600000000-zmodu-pipeline-run-index';

/** Add these to your TypeORM DataSource `entities`. */
export const ZMODU_PIPELINE_ENTITIES = [ProposalEntity, ApprovalDecisionEntity];
/** Add these to your TypeORM DataSource `migrations` (after ZMODU_GUARD_MIGRATIONS). */
export const ZMODU_PIPELINE_MIGRATIONS = [
  ZmoduPipeline1764461100000,
  ZmoduPipelineVersions1764480100000,
  ZmoduPipelineRunIndex1764600000000,
];
