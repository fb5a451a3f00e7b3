import { CONFIG_VERSION_CONFLICT_MESSAGE } from '../../skills/admin-skills.messages';
import { ZmoduError } from '@zmodu/core';

/** A config write named a version that is not the current one: somebody wrote in between. Nothing was written. */
export class ConfigVersionConflictException extends ZmoduError {
  constructor(
    readonly key: string,
    readonly expectedVersion: number,
    readonly currentVersion: number,
  ) {
    super(CONFIG_VERSION_CONFLICT_MESSAGE(key, expectedVersion, currentVersion));
    this.name = 'ConfigVersionConflictException';
  }
}
