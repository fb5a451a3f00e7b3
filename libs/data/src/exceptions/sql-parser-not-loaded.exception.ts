import { DataException } from './data.exception';

/** The SQL guard was used before loadSqlParser() finished. */
export class SqlParserNotLoadedException extends DataException {}
