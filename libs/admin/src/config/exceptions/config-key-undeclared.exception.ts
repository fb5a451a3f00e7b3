import { CONFIG_KEY_UNDECLARED_MESSAGE } from '../../skills/admin-skills.messages';
import { ZmoduError } from '@zmodu/core';

/** A config key that AdminSkillsModule's `config.keys` does not declare: it does not exist for anyone. */
export class ConfigKeyUndeclaredException extends ZmoduError {
  constructor(readonly key: string) {
    super(CONFIG_KEY_UNDECLARED_MESSAGE(key));
    this.name = 'ConfigKeyUndeclaredException';
  }
}
