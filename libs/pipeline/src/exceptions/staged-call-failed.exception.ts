import { ZmoduError } from '@zmodu/core';
/** Internal: the staged skill refused or failed; its observation says why. The transaction it ran in rolls back. */
export class StagedCallFailed extends ZmoduError {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'StagedCallFailed';
  }
}
