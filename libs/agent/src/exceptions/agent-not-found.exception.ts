import { UNKNOWN_AGENT_MESSAGE } from '../agent.messages';
import { ZmoduError } from '@zmodu/core';

export class AgentNotFoundException extends ZmoduError {
  constructor(
    readonly agent: string,
    known: string[],
  ) {
    super(UNKNOWN_AGENT_MESSAGE(agent, known));
    this.name = 'AgentNotFoundException';
  }
}
