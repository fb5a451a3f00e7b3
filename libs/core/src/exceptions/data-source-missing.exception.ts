import { DATA_SOURCE_MISSING_MESSAGE } from '../core.messages';
import { ZmoduError } from '../zmodu-error';

/**
 * A module whose store is 'typeorm' (the default) booted in an application without a TypeORM DataSource. The one
 * error of every module with a store (GuardModule, MemoryModule, OutboxModule, PipelineModule, AdminSkillsModule,
 * AgentWorkerModule, AgentJobsModule): the message names the option and what to do.
 */
export class DataSourceMissingException extends ZmoduError {
  constructor(
    /** The option that chose the TypeORM store, e.g. "MemoryModule.forRoot({ store })". */
    readonly option: string,
    /** What that store keeps, e.g. 'the memory notes'. */
    readonly keeps: string,
    memoryOffered: boolean,
  ) {
    super(DATA_SOURCE_MISSING_MESSAGE(option, keeps, memoryOffered));
    this.name = 'DataSourceMissingException';
  }
}
