import { DataException } from './data.exception';

/** Installing, checking or migrating db.query's second fence cannot go on (a role, table or column is wrong). */
export class TenantFenceError extends DataException {}
