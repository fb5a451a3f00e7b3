import { INVALID_CONFIG_VALUE_MESSAGE } from '../../skills/admin-skills.messages';

/** A value that does not fit its key's declared type. */
export class InvalidConfigValueException extends Error {
  constructor(
    readonly key: string,
    readonly problems: readonly string[],
  ) {
    super(INVALID_CONFIG_VALUE_MESSAGE(key, problems.join('; ')));
    this.name = 'InvalidConfigValueException';
  }
}
