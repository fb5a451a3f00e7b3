import { INVALID_AGENT_SPEC_MESSAGE } from '../agent.messages';

export class InvalidAgentSpecException extends Error {
  constructor(name: unknown, problem: string) {
    super(INVALID_AGENT_SPEC_MESSAGE(name, problem));
    this.name = 'InvalidAgentSpecException';
  }
}
