import { METRICS_OPTION_MESSAGE } from '../admin.messages';
import { ZmoduError } from '@zmodu/core';

/** Thrown at boot when a MetricsModule option is wrong; the message names the option and what to give instead. */
export class InvalidMetricsOptionsException extends ZmoduError {
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(METRICS_OPTION_MESSAGE(field, problem));
    this.name = 'InvalidMetricsOptionsException';
  }
}
