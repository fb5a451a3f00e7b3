import { INVALID_ADMIN_SKILLS_OPTIONS_MESSAGE } from '../admin-skills.messages';
import { ZmoduError } from '@zmodu/core';

/** AdminSkillsModule was given options that cannot work; the message names the field. Thrown at boot. */
export class InvalidAdminSkillsOptionsException extends ZmoduError {
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(INVALID_ADMIN_SKILLS_OPTIONS_MESSAGE(field, problem));
    this.name = 'InvalidAdminSkillsOptionsException';
  }
}
