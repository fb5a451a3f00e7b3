import { DataException } from './data.exception';

/** With `fence: { mode: 'required' }`, db.query's second fence is not installed at boot. */
export class FenceMissingException extends DataException {
  constructor(
    message: string,
    readonly problems: readonly string[],
  ) {
    super(message);
  }
}
