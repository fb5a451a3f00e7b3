import { InvalidDataOptionsException } from './invalid-data-options.exception';

/** A table, schema or column name of the options that is not a plain SQL identifier, or a statement without its tenant bind. */
export class InvalidIdentifierException extends InvalidDataOptionsException {}
