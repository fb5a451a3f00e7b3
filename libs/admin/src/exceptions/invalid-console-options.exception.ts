import { CONSOLE_OPTION_MESSAGE } from '../admin.messages';
import { ZmoduError } from '@zmodu/core';

/** AdminModule was given console options it cannot use: a boot error naming the field. */
export class InvalidConsoleOptionsException extends ZmoduError {
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(CONSOLE_OPTION_MESSAGE(field, problem));
    this.name = 'InvalidConsoleOptionsException';
  }
}
