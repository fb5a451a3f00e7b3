import { registerMigrations } from '@zmodu/core';
import { ZmoduPipeline1764461100000 } from './migrations/1764461100000-zmodu-pipeline';
import { ZmoduPipelineVersions1764480100000 } from './migrations/1764480100000-zmodu-pipeline-versions';
import { ZmoduPipelineRunIndex1764600000000 } from './migrations/1764600000000-zmodu-pipeline-run-index';

/** The proposals' tables, in order. `zmoduMigrations()` includes them once @zmodu/pipeline is loaded. */
export const ZMODU_PIPELINE_MIGRATIONS = registerMigrations('@zmodu/pipeline', [
  ZmoduPipeline1764461100000,
  ZmoduPipelineVersions1764480100000,
  ZmoduPipelineRunIndex1764600000000,
]);
