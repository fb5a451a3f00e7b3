import { INVALID_AGENT_SPEC_MESSAGE } from '../agent.messages';
import { ZmoduError } from '@zmodu/core';

export class InvalidAgentSpecException extends ZmoduError {
  constructor(name: unknown, problem: string) {
    super(INVALID_AGENT_SPEC_MESSAGE(name, problem));
    this.name = 'InvalidAgentSpecException';
  }
}
