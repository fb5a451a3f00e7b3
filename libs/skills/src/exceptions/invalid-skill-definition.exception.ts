import { INVALID_SKILL_MESSAGE } from '../skill.messages';

export class InvalidSkillDefinitionException extends Error {
  constructor(name: unknown, problem: string) {
    super(INVALID_SKILL_MESSAGE(name, problem));
    this.name = 'InvalidSkillDefinitionException';
  }
}
