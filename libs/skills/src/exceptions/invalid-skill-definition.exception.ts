import { INVALID_SKILL_MESSAGE } from '../skill.messages';
import { ZmoduError } from '@zmodu/core';

export class InvalidSkillDefinitionException extends ZmoduError {
  constructor(name: unknown, problem: string) {
    super(INVALID_SKILL_MESSAGE(name, problem));
    this.name = 'InvalidSkillDefinitionException';
  }
}
