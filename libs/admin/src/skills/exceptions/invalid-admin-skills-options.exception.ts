import { INVALID_ADMIN_SKILLS_OPTIONS_MESSAGE } from '../admin-skills.messages';

/** AdminSkillsModule was given options that cannot work; the message names the field. Thrown at boot. */
export class InvalidAdminSkillsOptionsException extends Error {
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(INVALID_ADMIN_SKILLS_OPTIONS_MESSAGE(field, problem));
    this.name = 'InvalidAdminSkillsOptionsException';
  }
}
