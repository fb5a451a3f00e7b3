import { UNKNOWN_AGENT_MESSAGE } from '../agent.messages';

export class AgentNotFoundException extends Error {
  constructor(
    readonly agent: string,
    known: string[],
  ) {
    super(UNKNOWN_AGENT_MESSAGE(agent, known));
    this.name = 'AgentNotFoundException';
  }
}
