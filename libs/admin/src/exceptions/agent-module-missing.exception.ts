import { AGENT_MODULE_MISSING_MESSAGE } from '../admin.messages';

/** AdminModule was given `agents: true` in an application without AgentModule: a boot error, saying what to import. */
export class AgentModuleMissingException extends Error {
  constructor() {
    super(AGENT_MODULE_MISSING_MESSAGE());
    this.name = 'AgentModuleMissingException';
  }
}
