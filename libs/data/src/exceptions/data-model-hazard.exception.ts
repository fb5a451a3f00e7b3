import { DataException } from './data.exception';
import type { DataFinding } from '../audit/data-audit';

/** With `strictData: true`, the data-model audit found hazards at boot (see `findings`). */
export class DataModelHazardException extends DataException {
  constructor(
    message: string,
    readonly findings: readonly DataFinding[],
  ) {
    super(message);
  }
}
