import { WORKER_DISABLED_MESSAGE } from '../agent.messages';
import { ZmoduError } from '@zmodu/core';

/** `AgentWorker.post` in an application whose AgentModule has no `worker` option. */
export class WorkerDisabledException extends ZmoduError {
  constructor() {
    super(WORKER_DISABLED_MESSAGE);
    this.name = 'WorkerDisabledException';
  }
}
