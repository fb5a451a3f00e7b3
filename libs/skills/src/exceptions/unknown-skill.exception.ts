import { UNKNOWN_SKILL_REMOVE_MESSAGE } from '../skill.messages';
import { ZmoduError } from '@zmodu/core';

/** `SkillRegistry.remove` of a name that is not registered. */
export class UnknownSkillException extends ZmoduError {
  constructor(readonly skill: string) {
    super(UNKNOWN_SKILL_REMOVE_MESSAGE(skill));
    this.name = 'UnknownSkillException';
  }
}
