import { METRICS_OPTION_MESSAGE } from '../admin.messages';

/** Thrown at boot when a MetricsModule option is wrong; the message names the option and what to give instead. */
export class InvalidMetricsOptionsException extends Error {
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(METRICS_OPTION_MESSAGE(field, problem));
    this.name = 'InvalidMetricsOptionsException';
  }
}
