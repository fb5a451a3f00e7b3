import { INVALID_GOAL_MESSAGE } from '../agent.messages';
import { ZmoduError } from '@zmodu/core';

/** `AgentWorker.post` with a goal, scope or agent it cannot run (HTTP 400). */
export class InvalidGoalException extends ZmoduError {
  constructor(readonly problem: string) {
    super(INVALID_GOAL_MESSAGE(problem));
    this.name = 'InvalidGoalException';
  }
}
