import { CONFIG_KEY_UNDECLARED_MESSAGE } from '../../skills/admin-skills.messages';

/** A config key that AdminSkillsModule's `config.keys` does not declare: it does not exist for anyone. */
export class ConfigKeyUndeclaredException extends Error {
  constructor(readonly key: string) {
    super(CONFIG_KEY_UNDECLARED_MESSAGE(key));
    this.name = 'ConfigKeyUndeclaredException';
  }
}
