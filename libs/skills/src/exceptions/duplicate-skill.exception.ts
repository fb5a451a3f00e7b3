import { DUPLICATE_SKILL_MESSAGE } from '../skill.messages';
import { ZmoduError } from '@zmodu/core';

export class DuplicateSkillException extends ZmoduError {
  constructor(
    readonly skill: string,
    readonly firstSource: string,
    readonly secondSource: string,
  ) {
    super(DUPLICATE_SKILL_MESSAGE(skill, firstSource, secondSource));
    this.name = 'DuplicateSkillException';
  }
}
