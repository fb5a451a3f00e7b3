import { CONFIG_KEY_IMMUTABLE_MESSAGE } from '../../skills/admin-skills.messages';
import { ZmoduError } from '@zmodu/core';

/** A write to a config key declared without `mutable: true`. */
export class ConfigKeyImmutableException extends ZmoduError {
  constructor(readonly key: string) {
    super(CONFIG_KEY_IMMUTABLE_MESSAGE(key));
    this.name = 'ConfigKeyImmutableException';
  }
}
