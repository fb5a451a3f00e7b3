import { MEMORY_ERASED_MESSAGE } from '../memory.messages';
import { ZmoduError } from '@zmodu/core';

/** A write that started before an erase of its scope: it is refused, never lands after the erase. */
export class MemoryErasedException extends ZmoduError {
  constructor(
    readonly tenantId: string,
    readonly userId: string,
  ) {
    super(MEMORY_ERASED_MESSAGE(tenantId, userId));
    this.name = 'MemoryErasedException';
  }
}
