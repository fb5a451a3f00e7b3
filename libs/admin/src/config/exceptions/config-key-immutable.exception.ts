import { CONFIG_KEY_IMMUTABLE_MESSAGE } from '../../skills/admin-skills.messages';

/** A write to a config key declared without `mutable: true`. */
export class ConfigKeyImmutableException extends Error {
  constructor(readonly key: string) {
    super(CONFIG_KEY_IMMUTABLE_MESSAGE(key));
    this.name = 'ConfigKeyImmutableException';
  }
}
