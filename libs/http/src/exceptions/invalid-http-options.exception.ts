import { INVALID_HTTP_OPTIONS_MESSAGE } from '../http.messages';
import { ZmoduError } from '@zmodu/core';

/** A ZmoduHttpModule (or ZmoduExceptionFilter) option that cannot work: thrown at boot, naming the field. */
export class InvalidHttpOptionsException extends ZmoduError {
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(INVALID_HTTP_OPTIONS_MESSAGE(field, problem));
    this.name = 'InvalidHttpOptionsException';
  }
}
