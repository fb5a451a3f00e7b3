import { WORKER_DISABLED_MESSAGE } from '../agent.messages';

/** `AgentWorker.post` in an application whose AgentModule has no `worker` option. */
export class WorkerDisabledException extends Error {
  constructor() {
    super(WORKER_DISABLED_MESSAGE);
    this.name = 'WorkerDisabledException';
  }
}
