/**
 * What db.query lets a model call. Everything here is a pure function of its arguments:
 * nothing with a side effect, nothing that reads server state, files, other sessions or the
 * catalogs, nothing that sleeps. Anything not listed is refused.
 */
export const ALLOWED_FUNCTIONS: ReadonlySet<string> = new Set([
  // aggregates
  'count', 'sum', 'avg', 'min', 'max', 'bool_and', 'bool_or', 'every', 'string_agg', 'array_agg',
  'stddev', 'stddev_pop', 'stddev_samp', 'variance', 'var_pop', 'var_samp', 'corr', 'covar_pop', 'covar_samp',
  'percentile_cont', 'percentile_disc', 'mode',
  // window
  'row_number', 'rank', 'dense_rank', 'percent_rank', 'cume_dist', 'ntile', 'lag', 'lead',
  'first_value', 'last_value', 'nth_value',
  // math
  'abs', 'ceil', 'ceiling', 'floor', 'round', 'trunc', 'sqrt', 'cbrt', 'power', 'pow', 'mod', 'sign',
  'exp', 'ln', 'log', 'log10', 'div', 'width_bucket',
  // strings
  'lower', 'upper', 'length', 'char_length', 'character_length', 'octet_length', 'substr', 'substring',
  'btrim', 'ltrim', 'rtrim', 'concat', 'concat_ws', 'replace', 'left', 'right', 'strpos', 'position',
  'lpad', 'rpad', 'initcap', 'split_part', 'starts_with', 'reverse', 'md5',
  // date and time
  'date_trunc', 'date_part', 'extract', 'age', 'make_date', 'make_time', 'make_interval', 'make_timestamp',
  'make_timestamptz', 'to_char', 'to_date', 'to_timestamp', 'to_number', 'justify_days', 'justify_hours',
  'justify_interval', 'isfinite', 'now', 'date_bin', 'timezone',
  // json built from the caller's rows
  'row_to_json', 'to_json', 'to_jsonb', 'json_agg', 'jsonb_agg',
  // misc
  'coalesce', 'nullif', 'greatest', 'least', 'num_nulls', 'num_nonnulls', 'cardinality', 'array_length',
]);

/** Type names a cast may name (as written, or as the parser normalizes them under pg_catalog). */
export const ALLOWED_TYPES: ReadonlySet<string> = new Set([
  'int', 'integer', 'int2', 'int4', 'int8', 'smallint', 'bigint', 'numeric', 'decimal', 'real', 'float4', 'float8',
  'double precision', 'text', 'varchar', 'bpchar', 'char', 'character', 'character varying', 'bool', 'boolean',
  'date', 'time', 'timetz', 'timestamp', 'timestamptz', 'interval', 'uuid', 'json', 'jsonb',
]);

export const ALLOWED_OPERATORS: ReadonlySet<string> = new Set([
  '=', '<>', '!=', '<', '>', '<=', '>=', '+', '-', '*', '/', '%', '||', '~~', '!~~', '~~*', '!~~*',
]);

/** SQL value functions that read only the clock. */
export const ALLOWED_SQL_VALUE_FUNCTIONS: ReadonlySet<string> = new Set([
  'SVFOP_CURRENT_DATE', 'SVFOP_CURRENT_TIME', 'SVFOP_CURRENT_TIME_N', 'SVFOP_CURRENT_TIMESTAMP',
  'SVFOP_CURRENT_TIMESTAMP_N', 'SVFOP_LOCALTIME', 'SVFOP_LOCALTIME_N', 'SVFOP_LOCALTIMESTAMP', 'SVFOP_LOCALTIMESTAMP_N',
]);

/** Fields EXTRACT(field FROM ...) may name (the parser turns the field into a string constant). */
export const EXTRACT_FIELDS: ReadonlySet<string> = new Set([
  'century', 'day', 'decade', 'dow', 'doy', 'epoch', 'hour', 'isodow', 'isoyear', 'julian', 'microseconds',
  'millennium', 'milliseconds', 'minute', 'month', 'quarter', 'second', 'timezone', 'timezone_hour',
  'timezone_minute', 'week', 'year',
]);

export const SYSTEM_COLUMNS: ReadonlySet<string> = new Set(['ctid', 'xmin', 'xmax', 'cmin', 'cmax', 'tableoid', 'oid']);

export const ALLOWED_A_EXPR_KINDS: ReadonlySet<string> = new Set([
  'AEXPR_OP', 'AEXPR_OP_ANY', 'AEXPR_OP_ALL', 'AEXPR_DISTINCT', 'AEXPR_NOT_DISTINCT', 'AEXPR_NULLIF', 'AEXPR_IN',
  'AEXPR_LIKE', 'AEXPR_ILIKE', 'AEXPR_BETWEEN', 'AEXPR_NOT_BETWEEN', 'AEXPR_BETWEEN_SYM', 'AEXPR_NOT_BETWEEN_SYM',
]);

export const ALLOWED_SUBLINK_TYPES: ReadonlySet<string> = new Set(['EXISTS_SUBLINK', 'ANY_SUBLINK', 'ALL_SUBLINK', 'EXPR_SUBLINK', 'ARRAY_SUBLINK']);
