import { Logger } from '@nestjs/common';
import { DataMessages } from '../data.messages';
import { InvalidDataOptionsException } from '../exceptions/invalid-data-options.exception';
import { bindPlaceholders } from './placeholders';
import { parseSql } from './pg-parser';
import {
  ALLOWED_A_EXPR_KINDS,
  ALLOWED_FROM_FUNCTIONS,
  ALLOWED_FUNCTIONS,
  ALLOWED_OPERATORS,
  ALLOWED_SQL_VALUE_FUNCTIONS,
  ALLOWED_SUBLINK_TYPES,
  ALLOWED_TYPES,
  EXTRACT_FIELDS,
  MIN_SERVER_VERSION,
  ROW_FUNCTION_NAMES,
  SYSTEM_COLUMNS,
} from './sql-allowlists';
import { printSelect, treeDifference } from './sql-printer';
import { refuse, SqlRefusal } from './sql-refusal';

/** A table db.query may read, and how it is scoped. */
export interface QueryableTable {
  /** Table name as written in SQL (and its schema, if any). */
  readonly table: string;
  readonly schema?: string;
  /** Column that holds the tenant id; null: a table shared by all tenants; undefined: unknown (fails closed with a tenant). */
  readonly tenantColumn?: string | null;
  /** Columns the model may see; omitted: all. */
  readonly columns?: readonly string[];
}

/**
 * How a column of a registered table reaches the model's statement (see `SqlGuard.useColumns`): as it is (a type of
 * PostgreSQL's own), as its base type (a domain over one), or as its text (any other type).
 */
export type ColumnShape = { readonly name: string } & (
  { readonly read: 'as_is' } | { readonly read: 'text' } | { readonly read: 'base'; readonly base: string }
);

export interface PreparedQuery {
  /**
   * The statement to run, and the only text that runs: printed by our own printer (every
   * identifier quoted), re-parsed and found equal to the tree that was checked and rewritten.
   * Every tenant table is replaced by a scoped subquery, and the whole is capped at `maxRows + 1` rows.
   */
  readonly text: string;
  /** The caller's arguments, then the tenant id once per scoped table, then the row cap. */
  readonly values: unknown[];
  /** The registered tables the statement reads. */
  readonly tables: string[];
}

export interface PrepareInput {
  readonly sql: unknown;
  readonly args?: unknown;
  /** The caller's tenant (from the context, never from the model). */
  readonly tenantId?: string;
  /** Rows to return at most; the statement fetches one more, to tell that it cut. Default 100. */
  readonly maxRows?: number;
}

export interface SqlGuardOptions {
  /** Accepted statements kept rewritten (default 500; 0 turns the cache off). */
  readonly cacheSize?: number;
  /**
   * The connected server's `server_version_num` (e.g. 150004), when known: syntax newer than it is refused
   * with what to write instead. Unknown: everything the parser knows is accepted. See `useServerVersion`.
   */
  readonly serverVersion?: number;
  /** Where a rewrite defect is reported (default: the Nest logger, as an error). */
  readonly onDefect?: (message: string) => void;
}

export const MAX_SQL_LENGTH = 10_000;
export const MAX_ARGS = 100;
/** Longest string an arg (or an element of an array arg) may be. */
export const MAX_ARG_LENGTH = 10_000;
/** The largest size a cast may give a type (char(n), varchar(n), numeric(p)). */
const MAX_TYPE_SIZE = 10_000;
/** Deepest nesting of function calls: the server cannot stop work inside one expression, which grows with it. */
export const MAX_FUNCTION_NESTING = 16;
/** Deepest parse tree the checker walks (the lexical pass bounds it well below this already). */
export const MAX_TREE_DEPTH = 400;
/**
 * Most UNION/INTERSECT/EXCEPT and most tables, subqueries and joins in FROM, in one statement: deeper plans overflow
 * the embedded database's stack.
 */
export const MAX_SET_OPERATIONS = 64;
export const MAX_RELATIONS = 64;
/** Functions whose result grows with an argument take that argument as a ? placeholder, at most this much. */
export const MAX_PAD_LENGTH = 10_000;
const SIZED_FUNCTIONS: ReadonlyMap<string, number> = new Map([
  ['lpad', 1],
  ['rpad', 1],
]);
/**
 * A search's work grows with the product of two lengths (the text and what it looks for), inside one call the server
 * cannot interrupt: LIKE of a 10,000-character pattern over a 1,000,000-character text ran 47 s past a 2 s
 * statement_timeout, and a text of that size is quick to build (replace, ||, string_agg). So the text searched holds at
 * most MAX_SEARCHED_LENGTH characters and what it looks for at most MAX_SEARCH_PATTERN_LENGTH, or the statement fails.
 */
export const MAX_SEARCHED_LENGTH = 1_000_000;
export const MAX_SEARCH_PATTERN_LENGTH = 100;
const LIKE_OPERATORS: ReadonlySet<string> = new Set(['~~', '!~~', '~~*', '!~~*']);
/**
 * Containment (`@>`, `<@`) of arrays and of jsonb compares each element of one side with the elements of the other, in
 * one call too: an array or a jsonb_agg of 30,000 elements tested against itself ran 8 s past a 1 s statement_timeout,
 * and array_agg over a join builds millions. So the sizes in bytes of its two sides, multiplied, stay below
 * MAX_CONTAINMENT_PRODUCT (a 1 MB document against a pattern of 1,000 bytes), or the statement fails. A power of ten:
 * withinProduct counts its digits.
 */
export const MAX_CONTAINMENT_PRODUCT = 1_000_000_000;
const CONTAINMENT_OPERATORS: ReadonlySet<string> = new Set(['@>', '<@']);
/** Functions that search a text (argument 0) for another (the others): the bound of each argument. */
const SEARCH_FUNCTIONS: ReadonlyMap<string, readonly number[]> = new Map([
  ['strpos', [MAX_SEARCHED_LENGTH, MAX_SEARCH_PATTERN_LENGTH]],
  ['position', [MAX_SEARCHED_LENGTH, MAX_SEARCH_PATTERN_LENGTH]],
  ['split_part', [MAX_SEARCHED_LENGTH, MAX_SEARCH_PATTERN_LENGTH]],
  // replace's result grows with its third argument too: bounded like a pattern.
  ['replace', [MAX_SEARCHED_LENGTH, MAX_SEARCH_PATTERN_LENGTH, MAX_SEARCH_PATTERN_LENGTH]],
  // trim(x, characters) looks each character of x's ends up among the characters.
  ['btrim', [MAX_SEARCHED_LENGTH, MAX_SEARCH_PATTERN_LENGTH]],
  ['ltrim', [MAX_SEARCHED_LENGTH, MAX_SEARCH_PATTERN_LENGTH]],
  ['rtrim', [MAX_SEARCHED_LENGTH, MAX_SEARCH_PATTERN_LENGTH]],
]);

type Node = Record<string, unknown>;
type Scope = ReadonlySet<string>;

interface WalkState {
  readonly paramCount: number;
  readonly tenantId?: string;
  /** The parameter of each scoped table, numbered after the caller's. */
  readonly tenantParams: Map<string, number>;
  readonly tables: Set<string>;
  depth: number;
  setOperations: number;
  relations: number;
  /** Parameters whose value is bounded (a pad length), by number. */
  readonly bounded: Map<number, number>;
  functionDepth: number;
  /** Inside a side of @> or <@ (see withinProduct). */
  inContainment: boolean;
  /** Replacements to apply after the walk: container[key] = node. */
  readonly rewrites: Array<() => void>;
  /** Every qualified column reference `x.f`, checked after the walk against the scalar set functions' names. */
  readonly qualified: Array<readonly [string, string]>;
  /**
   * The name of each json set function in FROM whose rows are scalars, and the one column it has (the same name may
   * stand for several, in different scopes: each must have the column).
   */
  readonly scalarSources: Map<string, string[]>;
}

const EMPTY: Scope = new Set();
/** `*` in a select list, as the parser gives it. */
const STAR: Node = Object.freeze({ ResTarget: { val: { ColumnRef: { fields: [{ A_Star: {} }] } } } }) as Node;
/** The alias of a table inside its scoped subquery (the subquery's own scope: no model name reaches it). */
const INNER_ALIAS = '_zt_t';
const innerColumn = (name: string): Node => ({ ColumnRef: { fields: [{ String: { sval: INNER_ALIAS } }, { String: { sval: name } }] } });
const PLAN_CACHE_SIZE = 500;
const RESULT_ALIAS = '_zt_result';
/** The schema every function, operator and type the statement names is taken from. */
const CATALOG = 'pg_catalog';
const catalogName = (name: string): Node[] => [{ String: { sval: CATALOG } }, { String: { sval: name } }];
/** The schema of a registered table that names none (as the fence and the data audit read it). */
const DEFAULT_SCHEMA = 'public';

interface Plan {
  readonly text: string;
  readonly paramCount: number;
  /** [parameter number, largest value] for the parameters a call checks. */
  readonly bounded: ReadonlyArray<readonly [number, number]>;
  /** How many tenant parameters follow the caller's (one per scoped table). */
  readonly tenantParams: number;
  readonly tables: string[];
}

/**
 * Turns a model's SELECT into a statement that can only read the caller's rows: parsed
 * with PostgreSQL's own parser, one plain SELECT, no literals, registered tables and
 * allowed functions only, and every reference to a tenant table replaced by
 * `(SELECT cols FROM table WHERE tenant_col = $t OFFSET 0) AS alias` — a subquery the
 * planner neither flattens nor pushes the model's predicates into, so no predicate of
 * the model is ever evaluated on another tenant's row. Each table gets a tenant parameter
 * of its own, so its type is the type of that table's tenant column.
 *
 * What runs is never the model's text: the rewritten tree is printed by our own printer,
 * and the printed text is parsed again and must give the same tree, or it is refused
 * (`rewrite_mismatch`, logged as a defect).
 */
export class SqlGuard {
  private readonly byName = new Map<string, QueryableTable[]>();
  /** Accepted statements, rewritten: an agent repeats its queries with other values. */
  private readonly cache = new Map<string, Plan>();
  private readonly cacheSize: number;
  private readonly onDefect: (message: string) => void;
  /** Every declared column of a registered table (exact names): `o.count` may mean the column where one is declared. */
  private readonly declaredColumns = new Set<string>();
  private serverVersion: number | undefined;
  /** The columns of each registered table (`schema.table`), in order, once known: see useColumns. */
  private columns: ReadonlyMap<string, readonly ColumnShape[]> | undefined;
  private columnsKey = '';

  constructor(tables: readonly QueryableTable[], options: SqlGuardOptions = {}) {
    this.cacheSize = Math.max(0, options.cacheSize ?? PLAN_CACHE_SIZE);
    this.serverVersion = options.serverVersion;
    const logger = new Logger('SqlGuard');
    this.onDefect = options.onDefect ?? ((m) => logger.error(m));
    for (const t of tables) {
      const key = t.table.toLowerCase();
      this.byName.set(key, [...(this.byName.get(key) ?? []), t]);
      for (const c of t.columns ?? []) this.declaredColumns.add(c);
      if (t.tenantColumn) this.declaredColumns.add(t.tenantColumn);
    }
  }

  /** The connected server's `server_version_num`, once known: later statements are checked against it. */
  useServerVersion(version: number | undefined): void {
    if (version === this.serverVersion) return;
    this.serverVersion = version;
    this.cache.clear();
  }

  /**
   * The columns of the registered tables (by `schema.table`, in their order), as the catalog holds them. A scoped
   * subquery then names each visible column, and gives the statement no value of a type that is not PostgreSQL's own:
   * a domain is read as its base type, any other type of the application's or of an extension (an enum, a composite,
   * a range, an array of one) as its text. Such a type carries what its owner attached to it (an implicit cast, a cast
   * to json that to_json calls without checking EXECUTE), each a function outside pg_catalog. A table without an entry
   * is read as before (its columns, or all of them, as they are); a column added later is not read until the next call.
   */
  useColumns(columns: ReadonlyMap<string, readonly ColumnShape[]>): void {
    const key = JSON.stringify([...columns].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    if (key === this.columnsKey) return;
    this.columnsKey = key;
    this.columns = new Map(columns);
    this.cache.clear();
  }

  tableNames(): string[] {
    return [...this.byName.keys()].sort();
  }

  prepare(input: PrepareInput): PreparedQuery {
    const { sql } = input;
    if (typeof sql !== 'string' || sql.trim() === '') refuse('bad_request', 'sql must be a non-empty string holding one SELECT.');
    if ((sql as string).length > MAX_SQL_LENGTH) refuse('too_complex', `sql is longer than ${MAX_SQL_LENGTH} characters: shorten it.`);
    const args = input.args ?? [];
    if (!Array.isArray(args)) refuse('bad_request', 'args must be an array of values, one per ? placeholder, in order.');
    const values = args as unknown[];
    if (values.length > MAX_ARGS) refuse('bad_request', `At most ${MAX_ARGS} args.`);
    values.forEach((v, i) => checkValue(v, i));
    const maxRows = input.maxRows ?? 100;
    if (!Number.isSafeInteger(maxRows) || maxRows < 1) throw new InvalidDataOptionsException(DataMessages.maxRowsInvalid(maxRows));

    const key = `${input.tenantId === undefined ? 0 : 1}${sql as string}`;
    let plan = this.cache.get(key);
    if (plan) {
      // Refresh its place in the LRU order.
      this.cache.delete(key);
      this.cache.set(key, plan);
    } else {
      plan = this.plan(sql as string, input.tenantId);
      if (this.cacheSize > 0) {
        this.cache.set(key, plan);
        if (this.cache.size > this.cacheSize) this.cache.delete(this.cache.keys().next().value as string);
      }
    }
    if (plan.paramCount !== values.length)
      refuse(
        'arg_count',
        `The statement has ${plan.paramCount} placeholder(s) but ${values.length} arg(s) were given: pass one arg per ?.`,
      );
    for (const [n, max] of plan.bounded) {
      const v = values[n - 1];
      const num = typeof v === 'number' ? v : typeof v === 'string' && /^\s*-?\d{1,15}\s*$/.test(v) ? Number(v) : NaN;
      if (!(Number.isFinite(num) && num <= max)) refuse('value_too_large', `args[${n - 1}] is a length: a whole number of at most ${max}.`);
    }
    const bound = [...values];
    for (let i = 0; i < plan.tenantParams; i++) bound.push(input.tenantId);
    bound.push(maxRows + 1);
    return { text: plan.text, values: bound, tables: plan.tables };
  }

  /** Parse, check, rewrite, print and verify (the result depends only on the text and on whether a tenant is in scope). */
  private plan(sql: string, tenantId: string | undefined): Plan {
    const bound = bindPlaceholders(sql);
    const stmts = this.parse(bound.text, (err) => {
      if (err instanceof RangeError) refuse('too_complex', 'The statement is too deeply nested to check: simplify it.');
      throw new SqlRefusal('syntax_error', `Syntax error: ${(err as Error).message}`);
    });
    if (stmts.length !== 1) refuse('multiple_statements', 'Send exactly one SELECT statement.');
    const stmt = stmts[0];
    if (!stmt || !('SelectStmt' in stmt))
      refuse('not_select', 'Only a SELECT is allowed (no INSERT, UPDATE, DELETE, DDL or utility statements).');

    const state: WalkState = {
      paramCount: bound.count,
      tenantId,
      tenantParams: new Map(),
      tables: new Set(),
      depth: 0,
      setOperations: 0,
      relations: 0,
      bounded: new Map(),
      functionDepth: 0,
      inContainment: false,
      rewrites: [],
      qualified: [],
      scalarSources: new Map(),
    };
    const holder = { stmt };
    this.visit(holder as unknown as Node, 'stmt', EMPTY, state, 'the statement');
    checkScalarSources(state);
    for (const apply of state.rewrites) apply();

    // SELECT * FROM (<the rewritten statement>) AS _zt_result LIMIT $cap
    const capParam = bound.count + state.tenantParams.size + 1;
    const wrapper: Node = {
      targetList: [STAR],
      fromClause: [{ RangeSubselect: { subquery: holder.stmt, alias: { aliasname: RESULT_ALIAS } } }],
      limitCount: { ParamRef: { number: capParam } },
      limitOption: 'LIMIT_OPTION_COUNT',
      op: 'SETOP_NONE',
    };

    const text = printSelect(wrapper);
    const again = this.parse(text, (err) => this.defect(sql, text, `the printed statement does not parse: ${(err as Error).message}`));
    if (again.length !== 1) this.defect(sql, text, `the printed statement parses as ${again.length} statements`);
    const difference = treeDifference({ SelectStmt: wrapper }, again[0]);
    if (difference) this.defect(sql, text, `the printed statement parses differently at ${difference}`);
    return Object.freeze({
      text,
      paramCount: bound.count,
      bounded: [...state.bounded],
      tenantParams: state.tenantParams.size,
      tables: [...state.tables].sort(),
    });
  }

  private parse(text: string, onError: (err: unknown) => never): Node[] {
    let tree: ReturnType<typeof parseSql>;
    try {
      tree = parseSql(text);
    } catch (err) {
      return onError(err);
    }
    return (tree.stmts ?? []).map((s) => s.stmt);
  }

  private defect(sql: string, printed: string, what: string): never {
    this.onDefect(
      `db.query defect: ${what}; the statement was refused. Model SQL: ${JSON.stringify(sql)} Printed: ${JSON.stringify(printed)}`,
    );
    return refuse(
      'rewrite_mismatch',
      'The statement could not be verified after rewriting, so it was refused (a defect of db.query, logged). Write it more simply.',
    );
  }

  // ---------------------------------------------------------------- the walk

  /** Visit container[key], which holds one node `{ Type: fields }`, or a list, or a scalar. */
  private visit(container: Node | unknown[], key: string | number, scope: Scope, s: WalkState, where: string): void {
    const value = (container as Record<string | number, unknown>)[key];
    if (value === null || value === undefined || typeof value !== 'object') return;
    if (++s.depth > MAX_TREE_DEPTH) refuse('too_complex', 'The statement is too deeply nested to check: simplify it.');
    try {
      this.visitNode(container, key, value as Node, scope, s, where);
    } finally {
      s.depth--;
    }
  }

  private visitNode(
    container: Node | unknown[],
    key: string | number,
    value: Node | unknown[],
    scope: Scope,
    s: WalkState,
    where: string,
  ): void {
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) this.visit(value, i, scope, s, where);
      return;
    }
    const entries = Object.keys(value as Node);
    if (entries.length === 0) return; // e.g. the empty marker of a plain DISTINCT
    if (entries.length !== 1) refuse('unsupported_syntax', `Unsupported syntax in ${where}.`);
    const type = entries[0];
    const fields = (value as Node)[type] as Node;
    switch (type) {
      case 'SelectStmt':
        return this.selectStmt(fields, scope, s);
      case 'RangeVar':
        this.relation(s);
        return this.rangeVar(container, key, fields, scope, s);
      case 'RangeSubselect':
        this.relation(s);
        return this.children(fields, ['subquery'], scope, s, 'a subquery in FROM');
      case 'JoinExpr':
        this.relation(s);
        if (fields.join_using_alias) this.needs('JOIN ... USING ... AS');
        return this.children(fields, ['larg', 'rarg', 'quals', 'usingClause'], scope, s, 'a JOIN');
      case 'RangeFunction':
        this.relation(s);
        return this.rangeFunction(fields, scope, s);
      case 'ResTarget':
        return this.children(fields, ['val', 'indirection'], scope, s, 'the select list');
      case 'ColumnRef':
        return this.columnRef(fields, s);
      case 'A_Star':
      case 'String':
        return;
      case 'ParamRef': {
        const n = fields.number as number;
        if (!(n >= 1 && n <= s.paramCount)) refuse('bad_placeholder', `Parameter $${n} has no arg.`);
        return;
      }
      case 'A_Const':
        return aConst(fields, where);
      case 'A_Expr':
        return this.aExpr(fields, scope, s);
      case 'BoolExpr':
      case 'NullTest':
      case 'BooleanTest':
      case 'CoalesceExpr':
      case 'MinMaxExpr':
      case 'CaseExpr':
      case 'CaseWhen':
      case 'List':
      case 'RowExpr':
      case 'A_ArrayExpr':
      case 'GroupingSet':
        return this.children(fields, Object.keys(fields), scope, s, where);
      case 'SortBy':
        if (Array.isArray(fields.useOp) && fields.useOp.length) refuse('unsupported_syntax', 'ORDER BY ... USING is not allowed.');
        return this.positional(fields, 'node', scope, s, 'ORDER BY');
      case 'FuncCall':
        if (++s.functionDepth > MAX_FUNCTION_NESTING)
          refuse('too_complex', `Function calls are nested more than ${MAX_FUNCTION_NESTING} deep: compute in steps (WITH).`);
        try {
          return this.funcCall(fields, scope, s);
        } finally {
          s.functionDepth--;
        }
      case 'WindowDef':
        return this.children(fields, ['partitionClause', 'orderClause', 'startOffset', 'endOffset'], scope, s, 'a window');
      case 'TypeCast':
        checkTypeName(fields.typeName as Node);
        qualifyType(fields.typeName as Node);
        // An array of a plain type takes its elements from a ? placeholder (one JS array) or ARRAY[...]:
        // never from a column or an expression, whose text the server would parse as an array literal.
        if (isArrayType(fields.typeName as Node) && !isNode(fields.arg, 'ParamRef') && !isNode(fields.arg, 'A_ArrayExpr'))
          refuse(
            'type_not_allowed',
            'Only a ? placeholder (its value an array) or ARRAY[...] may be cast to an array type, e.g. id = ANY(?::int[]).',
          );
        if (isNode(fields.arg, 'A_Const') && !isNullOrBool(fields.arg))
          refuse('literal_not_allowed', "Typed literals (like date '...') are not allowed: cast a ? placeholder instead, e.g. ?::date.");
        return this.visit(fields, 'arg', scope, s, 'a cast');
      case 'SubLink': {
        if (!ALLOWED_SUBLINK_TYPES.has(fields.subLinkType as string)) refuse('unsupported_syntax', 'This kind of subquery is not allowed.');
        // x IN (SELECT ...) is x = ANY (SELECT ...): its operator is named, pg_catalog's, like every other.
        if (Array.isArray(fields.operName) && fields.operName.length) {
          const op = checkOperator(fields.operName as Node[]);
          fields.operName = catalogName(op);
          if (LIKE_OPERATORS.has(op) || CONTAINMENT_OPERATORS.has(op)) ofMany(op);
        } else if (fields.subLinkType === 'ANY_SUBLINK') fields.operName = catalogName('=');
        return this.children(fields, ['testexpr', 'subselect'], scope, s, 'a subquery');
      }
      case 'SQLValueFunction':
        if (!ALLOWED_SQL_VALUE_FUNCTIONS.has(fields.op as string))
          refuse('function_not_allowed', 'Only CURRENT_DATE, CURRENT_TIME, CURRENT_TIMESTAMP, LOCALTIME and LOCALTIMESTAMP may be read.');
        return;
      default:
        return refuse('unsupported_syntax', `${describeNode(type)} is not allowed in db.query.`);
    }
  }

  /** Refuses a construct the connected server is too old for, saying what to write instead. */
  private needs(construct: string): void {
    const min = MIN_SERVER_VERSION.get(construct);
    if (!min || this.serverVersion === undefined || this.serverVersion >= min.version) return;
    refuse(
      'unsupported_syntax',
      `${construct} needs PostgreSQL ${min.version / 10000} or later, and this database runs ${formatVersion(this.serverVersion)}: ${min.instead}.`,
    );
  }

  private relation(s: WalkState): void {
    if (++s.relations > MAX_RELATIONS)
      refuse('too_complex', `The statement reads more than ${MAX_RELATIONS} tables, subqueries and joins: split it.`);
  }

  private children(fields: Node, keys: readonly string[], scope: Scope, s: WalkState, where: string): void {
    for (const k of keys) if (k in fields) this.visit(fields, k, scope, s, where);
  }

  /** ORDER BY 1 / GROUP BY 1: a positional integer is allowed there, and only there. */
  private positional(container: Node | unknown[], key: string | number, scope: Scope, s: WalkState, where: string): void {
    const v = (container as Record<string | number, unknown>)[key];
    if (isNode(v, 'A_Const') && isInteger((v as Node).A_Const as Node)) return;
    this.visit(container, key, scope, s, where);
  }

  private selectStmt(f: Node, outer: Scope, s: WalkState): void {
    if (f.intoClause) refuse('not_select', 'SELECT ... INTO is not allowed.');
    if (Array.isArray(f.lockingClause) && f.lockingClause.length) refuse('locking_not_allowed', 'FOR UPDATE / FOR SHARE are not allowed.');
    if (Array.isArray(f.valuesLists) && f.valuesLists.length) refuse('unsupported_syntax', 'VALUES lists are not allowed.');
    let scope = outer;
    const withClause = f.withClause as Node | undefined;
    if (withClause) {
      const w = (withClause.WithClause ?? withClause) as Node;
      if (w.recursive) refuse('recursive_not_allowed', 'WITH RECURSIVE is not allowed.');
      const names = new Set(outer);
      for (const cte of (w.ctes as Node[]) ?? []) {
        const c = cte.CommonTableExpr as Node;
        if (!c) refuse('unsupported_syntax', 'Unsupported WITH clause.');
        if (c.search_clause || c.cycle_clause) refuse('unsupported_syntax', 'SEARCH / CYCLE clauses are not allowed.');
        if (!isNode(c.ctequery, 'SelectStmt')) refuse('not_select', 'Only SELECT is allowed inside WITH (no data-modifying CTEs).');
        // A CTE sees the CTEs before it, and what the enclosing query sees.
        this.visit(c, 'ctequery', new Set(names), s, 'a WITH query');
        // PostgreSQL matches a CTE name exactly (the parser has already folded unquoted names).
        names.add(String(c.ctename));
      }
      scope = names;
    }
    // UNION / INTERSECT / EXCEPT: both sides are SelectStmt fields (unwrapped), under this WITH.
    if (f.op !== undefined && f.op !== 'SETOP_NONE' && ++s.setOperations > MAX_SET_OPERATIONS)
      refuse('too_complex', `The statement has more than ${MAX_SET_OPERATIONS} UNION/INTERSECT/EXCEPT: split it.`);
    for (const side of ['larg', 'rarg'] as const) {
      if (!f[side]) continue;
      if (++s.depth > MAX_TREE_DEPTH) refuse('too_complex', 'The statement is too deeply nested to check: simplify it.');
      try {
        this.selectStmt(f[side] as Node, scope, s);
      } finally {
        s.depth--;
      }
    }
    if (f.groupDistinct) this.needs('GROUP BY DISTINCT');
    this.children(f, ['targetList', 'fromClause', 'whereClause', 'havingClause', 'windowClause', 'distinctClause'], scope, s, 'the query');
    for (const listKey of ['groupClause', 'sortClause'] as const) {
      const list = f[listKey];
      if (Array.isArray(list))
        for (let i = 0; i < list.length; i++) this.positional(list, i, scope, s, listKey === 'groupClause' ? 'GROUP BY' : 'ORDER BY');
    }
    for (const k of ['limitCount', 'limitOffset'] as const) {
      const v = f[k];
      if (v === undefined) continue;
      if (isNode(v, 'A_Const') && !isNullOrBool(v)) refuse('literal_not_allowed', 'LIMIT and OFFSET take ? placeholders, not literals.');
      this.visit(f, k, scope, s, 'LIMIT/OFFSET');
    }
  }

  private rangeVar(container: Node | unknown[], key: string | number, rv: Node, scope: Scope, s: WalkState): void {
    const exact = String(rv.relname ?? '');
    const relname = exact.toLowerCase();
    const schema = rv.schemaname ? String(rv.schemaname).toLowerCase() : undefined;
    if (rv.catalogname) refuse('table_not_allowed', 'Cross-database references are not allowed.');
    // A CTE of an enclosing WITH, by its exact name, as PostgreSQL resolves it. (A registered table is
    // matched without regard to case: it is replaced by its scoped subquery, whatever the model meant.)
    // The subquery names its table with its schema, so no CTE of the model's can stand in for it.
    if (!schema && scope.has(exact)) return;
    const candidates = this.byName.get(relname) ?? [];
    const table = candidates.find((t) => (schema ? (t.schema ?? 'public').toLowerCase() === schema : true));
    if (!table || (!schema && candidates.length > 1))
      refuse(
        'table_not_allowed',
        `Table ${schema ? `${schema}.` : ''}${relname} is not available. Tables you can query: ${this.tableNames().join(', ') || '(none)'}.`,
      );
    s.tables.add(table!.table);
    const scoped = this.scopedSubquery(table!, rv, s);
    s.rewrites.push(() => {
      (container as Record<string | number, unknown>)[key] = scoped;
    });
  }

  private scopedSubquery(table: QueryableTable, rv: Node, s: WalkState): Node {
    let tenantColumn: string | undefined;
    let param = 1;
    if (s.tenantId !== undefined) {
      if (table.tenantColumn === undefined)
        refuse(
          'TenantScopeUnavailable',
          `Table ${table.table} has no tenant column configured, so it cannot be read with a tenant in scope.`,
        );
      if (table.tenantColumn !== null) {
        tenantColumn = table.tenantColumn;
        // One parameter per table: PostgreSQL gives it the type of that table's tenant column.
        const key = `${table.schema ?? ''}.${table.table}`;
        if (!s.tenantParams.has(key)) s.tenantParams.set(key, s.paramCount + s.tenantParams.size + 1);
        param = s.tenantParams.get(key)!;
      }
    }
    // (SELECT <columns> FROM <table> WHERE <tenant column> = $t OFFSET 0) AS <alias>, built as the parser
    // builds it (the printed text is parsed again and must give this very tree). OFFSET 0 is an optimization
    // fence: the planner never pushes the model's predicates into it, so none runs on another tenant's row.
    // Every column is qualified with the inner table's own alias: a tenant or declared column that the table
    // lacks is then an error, never resolved outward to a column of the model's query.
    const shapes = this.columns?.get(`${table.schema ?? DEFAULT_SCHEMA}.${table.table}`);
    const visible = table.columns?.length ? table.columns : shapes?.map((c) => c.name);
    const inner: Node = {
      targetList: visible?.length ? visible.map((c) => ({ ResTarget: readColumn(c, shapes) })) : [STAR],
      fromClause: [
        {
          RangeVar: {
            schemaname: table.schema ?? DEFAULT_SCHEMA,
            relname: table.table,
            // FROM ONLY t reads t without the tables that inherit from it, and so does its scoped subquery
            // (the parser leaves inh out for ONLY).
            ...(rv.inh === true ? { inh: true } : {}),
            relpersistence: 'p',
            alias: { aliasname: INNER_ALIAS },
          },
        },
      ],
      ...(tenantColumn
        ? {
            whereClause: {
              A_Expr: {
                kind: 'AEXPR_OP',
                name: catalogName('='),
                lexpr: innerColumn(tenantColumn),
                rexpr: { ParamRef: { number: param } },
              },
            },
          }
        : {}),
      limitOffset: { A_Const: { ival: {} } },
      limitOption: 'LIMIT_OPTION_COUNT',
      op: 'SETOP_NONE',
    };
    return { RangeSubselect: { subquery: { SelectStmt: inner }, alias: (rv.alias as Node | undefined) ?? { aliasname: rv.relname } } };
  }

  private columnRef(f: Node, s: WalkState): void {
    const fields = (f.fields as Node[]) ?? [];
    if (fields.length === 2 && isNode(fields[0], 'String') && isNode(fields[1], 'String'))
      s.qualified.push([String((fields[0].String as Node).sval), String((fields[1].String as Node).sval)]);
    for (const field of fields) {
      if (isNode(field, 'A_Star')) continue;
      const name = String(((field as Node).String as Node | undefined)?.sval ?? '').toLowerCase();
      if (SYSTEM_COLUMNS.has(name)) refuse('column_not_allowed', `System column ${name} is not available.`);
    }
    // o.f where o has no column f is the call f(o) on the whole row: a function that is not on the list.
    const last = fields.length > 1 ? fields[fields.length - 1] : undefined;
    const name = last && isNode(last, 'String') ? String((last.String as Node).sval) : undefined;
    if (name !== undefined && ROW_FUNCTION_NAMES.has(name) && !this.declaredColumns.has(name))
      refuse(
        'column_not_allowed',
        `${fields.map((x) => String(((x as Node).String as Node | undefined)?.sval ?? '*')).join('.')}: PostgreSQL reads a qualified ${name} ` +
          `that is not a declared column as the function ${name}() of the whole row. Give the column another name (SELECT count(*) AS n), or write it unqualified.`,
      );
  }

  /** jsonb_array_elements(o.lines) AS line in FROM: one json set function on the list, nothing else. */
  private rangeFunction(f: Node, scope: Scope, s: WalkState): void {
    const functions = (f.functions as Node[] | undefined) ?? [];
    const items = functions.length === 1 && isNode(functions[0], 'List') ? (((functions[0].List as Node).items as unknown[]) ?? []) : [];
    const call = items[0] as Node | undefined;
    const coldef = items[1];
    const name =
      call && isNode(call, 'FuncCall') ? String(((((call.FuncCall as Node).funcname as Node[]) ?? [])[0]?.String as Node)?.sval ?? '') : '';
    if (
      items.length !== 2 ||
      !(coldef === null || coldef === undefined || (typeof coldef === 'object' && Object.keys(coldef as object).length === 0)) ||
      f.is_rowsfrom ||
      (Array.isArray(f.coldeflist) && f.coldeflist.length) ||
      ((call!.FuncCall as Node).funcname as unknown[]).length !== 1 ||
      !ALLOWED_FROM_FUNCTIONS.has(name)
    )
      refuse(
        'function_in_from',
        `Functions in FROM are not allowed, but for one json set function: ${[...ALLOWED_FROM_FUNCTIONS.keys()].sort().join(', ')}, e.g. FROM orders o, jsonb_array_elements(o.lines) AS line.`,
      );
    // A set function of scalars (json_array_elements, json_object_keys) without ORDINALITY: its name stands for its value,
    // and a qualified name that is not its column calls a function on that value (line.current_setting is
    // current_setting(line)): only its column may be named after it.
    const column = ALLOWED_FROM_FUNCTIONS.get(name);
    if (typeof column === 'string' && !f.ordinality) {
      const alias = f.alias as Node | undefined;
      const source = alias ? String(alias.aliasname) : name;
      const colnames = (alias?.colnames as Node[] | undefined) ?? [];
      const own = colnames.length ? String((colnames[0].String as Node).sval) : column || source;
      s.scalarSources.set(source, [...(s.scalarSources.get(source) ?? []), own]);
    }
    this.visit(items, 0, scope, s, 'FROM');
  }

  private aExpr(f: Node, scope: Scope, s: WalkState): void {
    if (!ALLOWED_A_EXPR_KINDS.has(f.kind as string))
      refuse('operator_not_allowed', f.kind === 'AEXPR_SIMILAR' ? 'SIMILAR TO is not allowed: use LIKE.' : 'This operator is not allowed.');
    // Every operator named is pg_catalog's: printed OPERATOR(pg_catalog.op), LIKE and ILIKE as the ~~ operators they are.
    if (f.kind === 'AEXPR_OP' || f.kind === 'AEXPR_OP_ANY' || f.kind === 'AEXPR_OP_ALL')
      f.name = catalogName(checkOperator(f.name as Node[]));
    else if (f.kind === 'AEXPR_LIKE' || f.kind === 'AEXPR_ILIKE') {
      f.name = catalogName(checkOperator(f.name as Node[]));
      f.kind = 'AEXPR_OP';
    }
    const named = f.kind === 'AEXPR_OP' || f.kind === 'AEXPR_OP_ANY' || f.kind === 'AEXPR_OP_ALL';
    const op = named ? String((((f.name as Node[])[1] as Node).String as Node).sval) : '';
    const like = LIKE_OPERATORS.has(op);
    const containment = CONTAINMENT_OPERATORS.has(op);
    if ((like || containment) && (f.kind !== 'AEXPR_OP' || f.lexpr === undefined)) ofMany(op);
    if (!containment) this.children(f, ['lexpr', 'rexpr'], scope, s, 'an expression');
    else {
      // Its sides are written twice (their sizes, then the values): one containment holds no other, so that stays twice.
      if (s.inContainment)
        refuse('operator_not_allowed', `${op} inside a side of @> or <@ is not allowed: compute the inner one in a WITH query first.`);
      for (const side of [f.lexpr, f.rexpr])
        if (isNode(side, 'ParamRef'))
          refuse('bad_placeholder', `A ? beside ${op} takes its type: write ?::jsonb, or ?::text[] (the type of the other side).`);
      s.inContainment = true;
      try {
        this.children(f, ['lexpr', 'rexpr'], scope, s, 'an expression');
      } finally {
        s.inContainment = false;
      }
      f.lexpr = withinProduct(f.lexpr as Node, f.rexpr as Node);
    }
    // LIKE and ILIKE, however written: the text searched and the pattern are bounded in length.
    if (like) {
      f.lexpr = bounded(f.lexpr as Node, MAX_SEARCHED_LENGTH);
      f.rexpr = bounded(f.rexpr as Node, MAX_SEARCH_PATTERN_LENGTH);
    }
  }

  private funcCall(f: Node, scope: Scope, s: WalkState): void {
    const parts = ((f.funcname as Node[]) ?? []).map((p) => String(((p as Node).String as Node)?.sval ?? ''));
    const sqlSyntax = f.funcformat === 'COERCE_SQL_SYNTAX';
    let name: string;
    // Names exactly as PostgreSQL resolves them: "LOWER" is not lower.
    if (parts.length === 1) name = parts[0];
    // pg_catalog's own name for it is the name it is printed with anyway.
    else if (parts.length === 2 && parts[0] === CATALOG && !isEscapeFunction(parts[1])) name = parts[1];
    else if (parts.length === 2 && parts[0] === CATALOG)
      return refuse(
        'operator_not_allowed',
        'LIKE ... ESCAPE is not allowed: a LIKE pattern escapes with a backslash, in the value you pass.',
      );
    else return refuse('function_not_allowed', `Function ${parts.join('.')} is not allowed: only pg_catalog's functions are.`);
    if (!ALLOWED_FUNCTIONS.has(name)) refuse('function_not_allowed', `Function ${name}() is not allowed in db.query.`);
    if (f.func_variadic) refuse('function_not_allowed', 'VARIADIC calls are not allowed.');
    const args = (f.args as unknown[]) ?? [];
    if (name === 'date_bin') this.needs('date_bin()');
    if (name === 'timezone' && sqlSyntax && args.length === 1) this.needs('AT LOCAL');
    // The function is pg_catalog's, whatever else the search path holds (the SQL forms name it so already).
    if (!sqlSyntax) f.funcname = catalogName(name);
    // substring(x FROM pattern) and substring(x SIMILAR pattern ESCAPE e) run regular expressions: the
    // arguments after the string are positions, as integers.
    if (name === 'substring') for (let i = 1; i < args.length; i++) args[i] = asInteger(args[i] as Node);
    const sized = SIZED_FUNCTIONS.get(name);
    if (sized !== undefined) {
      // Its result grows with this argument: it must be a ? placeholder, whose value each call checks.
      let arg = args[sized] as Node | undefined;
      if (arg && isNode(arg, 'TypeCast')) arg = (arg.TypeCast as Node).arg as Node;
      if (!arg || !isNode(arg, 'ParamRef'))
        refuse('function_not_allowed', `${name}() takes its length as a ? placeholder (at most ${MAX_PAD_LENGTH}), not an expression.`);
      s.bounded.set(((arg as Node).ParamRef as Node).number as number, MAX_PAD_LENGTH);
    }
    if (name === 'extract' && sqlSyntax && isNode(args[0], 'A_Const')) {
      const field = String(((((args[0] as Node).A_Const as Node).sval as Node) ?? {}).sval ?? '');
      if (!EXTRACT_FIELDS.has(field)) refuse('function_not_allowed', `EXTRACT field ${field} is not allowed.`);
      for (let i = 1; i < args.length; i++) this.visit(args, i, scope, s, 'EXTRACT');
    } else {
      this.visit(f, 'args', scope, s, `${name}()`);
    }
    // Past the checks: what a search reads is bounded in length (the bound is ours, never visited as the model's).
    const limits = SEARCH_FUNCTIONS.get(name);
    if (limits) for (let i = 0; i < Math.min(args.length, limits.length); i++) args[i] = bounded(args[i] as Node, limits[i]);
    this.children(f, ['agg_order', 'agg_filter'], scope, s, `${name}()`);
    // OVER (...) holds WindowDef fields (unwrapped).
    if (f.over) this.children(f.over as Node, ['partitionClause', 'orderClause', 'startOffset', 'endOffset'], scope, s, 'a window');
  }
}

// ---------------------------------------------------------------- helpers

/**
 * `pg_catalog.varchar(x, max, false)`: x as it is, or an error (value too long, 22001) when it holds more than `max`
 * characters; x is evaluated once. (A char(n) value is read without its padding, as text; all-blank excess is cut.)
 */
function bounded(node: Node, max: number): Node {
  return {
    FuncCall: {
      funcname: catalogName('varchar'),
      args: [node, { A_Const: { ival: { ival: max + 4 } } }, { A_Const: { boolval: {} } }],
      funcformat: 'COERCE_EXPLICIT_CALL',
    },
  };
}

/**
 * `CASE WHEN pg_catalog.varchar(pg_catalog.concat(size(x)::int8 * size(y)), 9, false) IS NOT NULL THEN x END`: x, once
 * the product of the two sides' sizes (pg_column_size, NULL for NULL) is known to have at most 9 digits (below
 * MAX_CONTAINMENT_PRODUCT); otherwise an error (value too long, 22001), before the containment runs. CASE evaluates its
 * condition first, so no other order of evaluation (the planner reorders a WHERE's ANDs) lets the containment go first.
 */
function withinProduct(x: Node, y: Node): Node {
  const size = (v: Node): Node => ({
    FuncCall: { funcname: catalogName('pg_column_size'), args: [v], funcformat: 'COERCE_EXPLICIT_CALL' },
  });
  const product: Node = {
    A_Expr: {
      kind: 'AEXPR_OP',
      name: catalogName('*'),
      lexpr: { TypeCast: { arg: size(x), typeName: { names: catalogName('int8'), typemod: -1 } } },
      rexpr: size(y),
    },
  };
  const digits = String(MAX_CONTAINMENT_PRODUCT).length - 1;
  const text: Node = { FuncCall: { funcname: catalogName('concat'), args: [product], funcformat: 'COERCE_EXPLICIT_CALL' } };
  return {
    CaseExpr: {
      args: [{ CaseWhen: { expr: { NullTest: { arg: bounded(text, digits), nulltesttype: 'IS_NOT_NULL' } }, result: x } }],
    },
  };
}

/** LIKE or containment over ANY/ALL (an array, or a subquery): each element would be searched for in full, with no bound. */
function ofMany(op: string): never {
  return refuse(
    'operator_not_allowed',
    LIKE_OPERATORS.has(op)
      ? 'LIKE ANY / ALL (a list or a subquery of patterns) is not allowed: write x LIKE ? OR x LIKE ?, one ? per pattern.'
      : `${op} ANY / ALL (a list or a subquery) is not allowed: write x ${op} ?::jsonb OR x ${op} ?::jsonb, one ? per value.`,
  );
}

/**
 * A column of the scoped subquery as the statement reads it (see SqlGuard.useColumns): as it is, cast to its base type
 * (a domain), or its text by its type's output function (`pg_catalog.concat` calls that, and nothing of a cast), NULL
 * kept NULL (`num_nonnulls` tests the value itself, not the fields of a row).
 */
function readColumn(name: string, shapes: readonly ColumnShape[] | undefined): Node {
  const shape = shapes?.find((c) => c.name === name);
  const column = innerColumn(name);
  if (!shape || shape.read === 'as_is') return { val: column };
  if (shape.read === 'base') return { name, val: { TypeCast: { arg: column, typeName: { names: catalogName(shape.base), typemod: -1 } } } };
  const call = (fn: string): Node => ({ FuncCall: { funcname: catalogName(fn), args: [column], funcformat: 'COERCE_EXPLICIT_CALL' } });
  return {
    name,
    val: {
      CaseExpr: {
        args: [
          {
            CaseWhen: {
              expr: {
                A_Expr: {
                  kind: 'AEXPR_OP',
                  name: catalogName('='),
                  lexpr: call('num_nonnulls'),
                  rexpr: { A_Const: { ival: { ival: 1 } } },
                },
              },
              result: call('concat'),
            },
          },
        ],
      },
    },
  };
}

/**
 * `x.f` where x names a set function of scalars: PostgreSQL reads it as the function f() of x's value (any function of
 * pg_catalog that takes a text: current_setting, pg_read_file, pg_relation_size) unless f is x's column.
 */
function checkScalarSources(s: WalkState): void {
  for (const [source, name] of s.qualified) {
    const columns = s.scalarSources.get(source);
    if (columns && !columns.every((c) => c === name))
      refuse(
        'column_not_allowed',
        `${source}.${name}: ${source} names the values of a json set function, and PostgreSQL reads ${source}.${name} as the function ` +
          `${name}() of a value. Write ${source} for the value${columns[0] !== source ? ` (or ${source}.${columns[0]})` : ''}, and give a table of the statement another name than ${source}.`,
      );
  }
}

function isNode(v: unknown, type: string): boolean {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && type in (v as Node);
}

function isInteger(c: Node): boolean {
  return 'ival' in c;
}

function isNullOrBool(v: unknown): boolean {
  const c = (v as Node).A_Const as Node;
  return c.isnull === true || 'boolval' in c;
}

/** NULL, TRUE and FALSE are allowed: they carry no value an attacker could not send as a parameter. */
function aConst(c: Node, where: string): void {
  if (c.isnull === true || 'boolval' in c) return;
  const hint = 'sval' in c || 'bsval' in c ? 'String and bit-string literals are not allowed' : 'Numeric literals are not allowed';
  refuse('literal_not_allowed', `${hint} (in ${where}): use ? placeholders instead of literals and pass the values in args.`);
}

/** The operator a name stands for (written bare or as pg_catalog's), if it is on the list. */
function checkOperator(name: Node[] | undefined): string {
  const parts = (name ?? []).map((p) => String(((p as Node).String as Node)?.sval ?? ''));
  const op = parts.length === 1 ? parts[0] : parts.length === 2 && parts[0] === CATALOG ? parts[1] : '';
  if (!ALLOWED_OPERATORS.has(op)) refuse('operator_not_allowed', `Operator ${parts.join('.')} is not allowed.`);
  return op;
}

/** A type named bare is pg_catalog's (`text` becomes `pg_catalog.text`; `int` is parsed as `pg_catalog.int4` already). */
function qualifyType(t: Node): void {
  const names = (t.names as Node[]) ?? [];
  if (names.length === 1) t.names = catalogName(String((names[0].String as Node).sval));
}

/** What LIKE ... ESCAPE and SIMILAR TO ... ESCAPE parse to. */
function isEscapeFunction(name: string): boolean {
  return name === 'like_escape' || name === 'similar_to_escape';
}

const INTEGER_TYPES: ReadonlySet<string> = new Set(['int2', 'int4', 'int8']);

/** An argument as an integer: itself when it is cast to one already, else cast to pg_catalog.int4. */
function asInteger(arg: Node): Node {
  if (isNode(arg, 'TypeCast')) {
    const names = (((arg.TypeCast as Node).typeName as Node).names as Node[]) ?? [];
    const last = String((names[names.length - 1]?.String as Node | undefined)?.sval ?? '');
    if (INTEGER_TYPES.has(last) && !isArrayType((arg.TypeCast as Node).typeName as Node)) return arg;
  }
  return { TypeCast: { arg, typeName: { names: catalogName('int4'), typemod: -1 } } };
}

function formatVersion(version: number): string {
  return version >= 100000 ? `PostgreSQL ${Math.floor(version / 10000)}.${version % 10000}` : `PostgreSQL ${version}`;
}

function checkTypeName(t: Node | undefined): void {
  const names = ((t?.names as Node[]) ?? []).map((p) => String(((p as Node).String as Node)?.sval ?? ''));
  const name = names.length === 2 && names[0] === 'pg_catalog' ? names[1] : names.length === 1 ? names[0] : '';
  if (!ALLOWED_TYPES.has(name)) refuse('type_not_allowed', `Cast to ${names.join('.') || 'this type'} is not allowed.`);
  const bounds = (t?.arrayBounds as Node[] | undefined) ?? [];
  // One dimension, no declared size: text[], int[] (a size or a second dimension is not needed for a list of values).
  if (bounds.length > 1 || (bounds.length === 1 && !(isNode(bounds[0], 'Integer') && ((bounds[0].Integer as Node).ival as number) === -1)))
    refuse('type_not_allowed', `Cast to ${names.join('.')}[] with one dimension and no size, e.g. ?::${name}[].`);
  if (t?.setof || t?.pct_type) refuse('type_not_allowed', 'This type form is not allowed.');
  // A size (char(n), varchar(n), numeric(p, s), ...) is a small integer: char(10485760) would pad every value
  // to 10 MB, work a server cannot interrupt once it runs.
  for (const mod of (t?.typmods as Node[] | undefined) ?? []) {
    const ival = isNode(mod, 'A_Const') ? ((mod.A_Const as Node).ival as Node | undefined) : undefined;
    const value = ival ? (ival.ival ?? 0) : undefined; // the parser leaves out a zero
    if (!(typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_TYPE_SIZE))
      refuse('type_not_allowed', `A type size must be a whole number of at most ${MAX_TYPE_SIZE}, e.g. ?::varchar(100).`);
  }
}

function isArrayType(t: Node | undefined): boolean {
  return Array.isArray(t?.arrayBounds) && (t.arrayBounds as unknown[]).length > 0;
}

/** How deep a string argument may nest [ and { (as JSON, 5000 levels overflow the embedded database's stack). */
const MAX_ARG_NESTING = 256;

function deep(x: unknown): boolean {
  if (typeof x !== 'string' || x.length <= MAX_ARG_NESTING) return false;
  let depth = 0;
  for (let k = 0; k < x.length; k++) {
    const c = x.charCodeAt(k);
    if (c === 91 || c === 123) {
      if (++depth > MAX_ARG_NESTING) return true;
    } else if ((c === 93 || c === 125) && depth > 0) depth--;
  }
  return false;
}

function checkValue(v: unknown, i: number): void {
  const ok = (x: unknown) => x === null || typeof x === 'string' || typeof x === 'boolean' || (typeof x === 'number' && Number.isFinite(x));
  const long = (x: unknown) => typeof x === 'string' && x.length > MAX_ARG_LENGTH;
  // No null inside an array value: the embedded database would read it as the text 'NULL'.
  if (ok(v) || (Array.isArray(v) && v.length <= 1000 && v.every((x) => x !== null && ok(x)))) {
    if (long(v) || (Array.isArray(v) && v.some(long)))
      refuse('value_too_large', `args[${i}] holds a string longer than ${MAX_ARG_LENGTH} characters.`);
    if (deep(v) || (Array.isArray(v) && v.some(deep)))
      refuse(
        'value_too_large',
        `args[${i}] nests brackets more than ${MAX_ARG_NESTING} deep (cast to json, it would overflow the parser).`,
      );
    return;
  }
  refuse('bad_request', `args[${i}] must be a string, a finite number, a boolean, null, or an array of strings, numbers or booleans.`);
}

function describeNode(type: string): string {
  const names: Record<string, string> = {
    RangeFunction: 'A function in FROM',
    RangeTableFunc: 'XMLTABLE',
    RangeTableSample: 'TABLESAMPLE',
    CollateClause: 'COLLATE',
    A_Indirection: 'Subscripts and field selection',
    XmlExpr: 'XML functions',
    XmlSerialize: 'XML functions',
    CurrentOfExpr: 'CURRENT OF',
  };
  return names[type] ?? `The construct ${type}`;
}
