import { DUPLICATE_SKILL_MESSAGE } from '../skill.messages';

export class DuplicateSkillException extends Error {
  constructor(
    readonly skill: string,
    readonly firstSource: string,
    readonly secondSource: string,
  ) {
    super(DUPLICATE_SKILL_MESSAGE(skill, firstSource, secondSource));
    this.name = 'DuplicateSkillException';
  }
}
