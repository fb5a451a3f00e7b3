import { AGENT_MODULE_MISSING_MESSAGE } from '../admin.messages';
import { ZmoduError } from '@zmodu/core';

/** AdminModule was given `agents: true` in an application without AgentModule: a boot error, saying what to import. */
export class AgentModuleMissingException extends ZmoduError {
  constructor() {
    super(AGENT_MODULE_MISSING_MESSAGE());
    this.name = 'AgentModuleMissingException';
  }
}
