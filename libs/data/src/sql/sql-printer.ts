import { refuse } from './sql-refusal';

/**
 * Prints a SELECT parse tree (libpg_query's JSON) as SQL text, for the subset of syntax that
 * the SQL guard accepts and nothing more: an unknown node or field value is refused, never
 * guessed at. Every identifier (tables, columns, aliases, CTE and window names, functions,
 * types) is printed quoted, every compound expression parenthesized, and no literal but NULL,
 * TRUE, FALSE and integers is ever printed, so no name or value can become syntax. The guard
 * re-parses what this prints and requires the same tree (see `sameTree`).
 */
type Node = Record<string, unknown>;

export function printSelect(select: Node): string {
  return selectStmt(select);
}

/** A quoted identifier: `"` doubled inside, so nothing in a name can end it. */
export function quoteName(name: unknown): string {
  if (typeof name !== 'string' || name === '' || name.includes('\0')) return unsupported('an identifier');
  return name.includes('"') ? `"${name.replace(/"/g, '""')}"` : `"${name}"`;
}

function unsupported(what: string): never {
  return refuse('unsupported_syntax', `${what} cannot be printed safely, so it is not allowed in db.query.`);
}

function single(node: unknown): [string, Node] {
  if (typeof node !== 'object' || node === null || Array.isArray(node)) return unsupported('A malformed node');
  let type: string | undefined;
  for (const k in node) {
    if (type !== undefined) return unsupported('A malformed node');
    type = k;
  }
  if (type === undefined) return unsupported('A malformed node');
  return [type, (node as Node)[type] as Node];
}

function list(value: unknown): unknown[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) return unsupported('A malformed list');
  return value;
}

function stringOf(node: unknown): string {
  const [type, f] = single(node);
  if (type !== 'String' || typeof f.sval !== 'string') return unsupported('A name');
  return f.sval;
}

// ---------------------------------------------------------------- statements

function selectStmt(f: Node): string {
  if (f.intoClause || list(f.lockingClause).length || list(f.valuesLists).length) unsupported('INTO, FOR UPDATE or VALUES');
  let out = '';
  if (f.withClause) out += `${withClause(f.withClause as Node)} `;
  const op = f.op ?? 'SETOP_NONE';
  if (op !== 'SETOP_NONE') {
    const word =
      op === 'SETOP_UNION'
        ? 'UNION'
        : op === 'SETOP_INTERSECT'
          ? 'INTERSECT'
          : op === 'SETOP_EXCEPT'
            ? 'EXCEPT'
            : unsupported('A set operation');
    if (!f.larg || !f.rarg) unsupported('A set operation');
    out += `(${selectStmt(f.larg as Node)}) ${word}${f.all ? ' ALL' : ''} (${selectStmt(f.rarg as Node)})`;
  } else {
    out += 'SELECT';
    const distinct = list(f.distinctClause);
    if (distinct.length === 1 && isEmptyObject(distinct[0])) out += ' DISTINCT';
    else if (distinct.length) out += ` DISTINCT ON (${distinct.map(expr).join(', ')})`;
    const targets = list(f.targetList);
    if (targets.length) out += ` ${targets.map(resTarget).join(', ')}`;
    const from = list(f.fromClause);
    if (from.length) out += ` FROM ${from.map(fromItem).join(', ')}`;
    if (f.whereClause) out += ` WHERE ${expr(f.whereClause)}`;
    const group = list(f.groupClause);
    if (group.length) out += ` GROUP BY ${f.groupDistinct ? 'DISTINCT ' : ''}${group.map(expr).join(', ')}`;
    if (f.havingClause) out += ` HAVING ${expr(f.havingClause)}`;
    const windows = list(f.windowClause);
    if (windows.length) out += ` WINDOW ${windows.map(windowClauseEntry).join(', ')}`;
  }
  const sort = list(f.sortClause);
  if (sort.length) out += ` ORDER BY ${sort.map(sortBy).join(', ')}`;
  const option = f.limitOption ?? 'LIMIT_OPTION_DEFAULT';
  if (option === 'LIMIT_OPTION_WITH_TIES') {
    if (f.limitOffset) out += ` OFFSET ${expr(f.limitOffset)} ROWS`;
    out += ` FETCH FIRST ${expr(f.limitCount)} ROWS WITH TIES`;
  } else if (option === 'LIMIT_OPTION_COUNT' || option === 'LIMIT_OPTION_DEFAULT') {
    if (f.limitCount) out += ` LIMIT ${expr(f.limitCount)}`;
    if (f.limitOffset) out += ` OFFSET ${expr(f.limitOffset)}`;
  } else unsupported('This LIMIT form');
  return out;
}

function withClause(node: Node): string {
  const w = (node.WithClause ?? node) as Node;
  if (w.recursive) unsupported('WITH RECURSIVE');
  const ctes = list(w.ctes).map((cte) => {
    const [type, c] = single(cte);
    if (type !== 'CommonTableExpr' || c.search_clause || c.cycle_clause) return unsupported('This WITH clause');
    const cols = list(c.aliascolnames);
    const materialized =
      c.ctematerialized === 'CTEMaterializeAlways'
        ? 'MATERIALIZED '
        : c.ctematerialized === 'CTEMaterializeNever'
          ? 'NOT MATERIALIZED '
          : '';
    const [qtype, query] = single(c.ctequery);
    if (qtype !== 'SelectStmt') return unsupported('A non-SELECT WITH query');
    return `${quoteName(c.ctename)}${cols.length ? `(${cols.map((n) => quoteName(stringOf(n))).join(', ')})` : ''} AS ${materialized}(${selectStmt(query)})`;
  });
  return `WITH ${ctes.join(', ')}`;
}

function subquery(node: unknown): string {
  const [type, f] = single(node);
  if (type !== 'SelectStmt') return unsupported('A non-SELECT subquery');
  return selectStmt(f);
}

function resTarget(node: unknown): string {
  const [type, f] = single(node);
  if (type !== 'ResTarget' || list(f.indirection).length) return unsupported('A select-list entry');
  return `${expr(f.val)}${f.name !== undefined ? ` AS ${quoteName(f.name)}` : ''}`;
}

function alias(a: unknown): string {
  if (a === undefined) return '';
  const f = a as Node;
  const cols = list(f.colnames);
  return ` AS ${quoteName(f.aliasname)}${cols.length ? `(${cols.map((n) => quoteName(stringOf(n))).join(', ')})` : ''}`;
}

function fromItem(node: unknown): string {
  const [type, f] = single(node);
  switch (type) {
    case 'RangeVar': {
      if (f.catalogname || (f.relpersistence !== undefined && f.relpersistence !== 'p')) return unsupported('This table reference');
      const name = `${f.schemaname !== undefined ? `${quoteName(f.schemaname)}.` : ''}${quoteName(f.relname)}`;
      // The parser leaves inh out (false) for ONLY t.
      return `${f.inh === true ? '' : 'ONLY '}${name}${alias(f.alias)}`;
    }
    case 'RangeSubselect':
      return `${f.lateral ? 'LATERAL ' : ''}(${subquery(f.subquery)})${alias(f.alias)}`;
    case 'RangeFunction': {
      // One plain function call, no ROWS FROM and no column definitions: f(args) [WITH ORDINALITY] [AS alias(cols)].
      const functions = list(f.functions);
      if (functions.length !== 1 || f.is_rowsfrom || list(f.coldeflist).length) return unsupported('This function in FROM');
      const [lt, l] = single(functions[0]);
      const items = lt === 'List' ? list(l.items) : [];
      if (items.length !== 2 || !(items[1] === null || isEmptyObject(items[1]))) return unsupported('This function in FROM');
      const [ct, call] = single(items[0]);
      if (ct !== 'FuncCall' || call.over || call.agg_star || call.agg_filter || list(call.agg_order).length)
        return unsupported('This function in FROM');
      return `${f.lateral ? 'LATERAL ' : ''}${funcCall(call)}${f.ordinality ? ' WITH ORDINALITY' : ''}${alias(f.alias)}`;
    }
    case 'JoinExpr':
      return f.alias !== undefined ? `(${joinBody(f)})${alias(f.alias)}` : joinBody(f);
    default:
      return unsupported(`${type} in FROM`);
  }
}

function joinSide(node: unknown): string {
  const [type, f] = single(node);
  return type === 'JoinExpr' && f.alias === undefined ? `(${joinBody(f)})` : fromItem(node);
}

function joinBody(f: Node): string {
  const natural = f.isNatural ? 'NATURAL ' : '';
  const using = list(f.usingClause);
  let kind: string;
  switch (f.jointype) {
    case 'JOIN_INNER':
      kind = !natural && !f.quals && !using.length ? 'CROSS JOIN' : 'JOIN';
      break;
    case 'JOIN_LEFT':
      kind = 'LEFT JOIN';
      break;
    case 'JOIN_RIGHT':
      kind = 'RIGHT JOIN';
      break;
    case 'JOIN_FULL':
      kind = 'FULL JOIN';
      break;
    default:
      return unsupported('This join');
  }
  let out = `${joinSide(f.larg)} ${natural}${kind} ${joinSide(f.rarg)}`;
  if (f.quals) out += ` ON ${expr(f.quals)}`;
  if (using.length) {
    out += ` USING (${using.map((n) => quoteName(stringOf(n))).join(', ')})`;
    if (f.join_using_alias) out += ` AS ${quoteName((f.join_using_alias as Node).aliasname)}`;
  } else if (f.join_using_alias) unsupported('This join');
  return out;
}

function sortBy(node: unknown): string {
  const [type, f] = single(node);
  if (type !== 'SortBy' || list(f.useOp).length) return unsupported('This ORDER BY');
  const dir =
    f.sortby_dir === 'SORTBY_ASC'
      ? ' ASC'
      : f.sortby_dir === 'SORTBY_DESC'
        ? ' DESC'
        : f.sortby_dir === 'SORTBY_DEFAULT' || f.sortby_dir === undefined
          ? ''
          : unsupported('This ORDER BY');
  const nulls =
    f.sortby_nulls === 'SORTBY_NULLS_FIRST'
      ? ' NULLS FIRST'
      : f.sortby_nulls === 'SORTBY_NULLS_LAST'
        ? ' NULLS LAST'
        : f.sortby_nulls === 'SORTBY_NULLS_DEFAULT' || f.sortby_nulls === undefined
          ? ''
          : unsupported('This ORDER BY');
  return `${expr(f.node)}${dir}${nulls}`;
}

// ---------------------------------------------------------------- windows

const FRAME = {
  NONDEFAULT: 0x1,
  RANGE: 0x2,
  ROWS: 0x4,
  GROUPS: 0x8,
  BETWEEN: 0x10,
  START_UNBOUNDED_PRECEDING: 0x20,
  END_UNBOUNDED_FOLLOWING: 0x100,
  START_CURRENT_ROW: 0x200,
  END_CURRENT_ROW: 0x400,
  START_OFFSET_PRECEDING: 0x800,
  END_OFFSET_PRECEDING: 0x1000,
  START_OFFSET_FOLLOWING: 0x2000,
  END_OFFSET_FOLLOWING: 0x4000,
  EXCLUDE_CURRENT_ROW: 0x8000,
  EXCLUDE_GROUP: 0x10000,
  EXCLUDE_TIES: 0x20000,
} as const;
const DEFAULT_FRAME = FRAME.RANGE | FRAME.START_UNBOUNDED_PRECEDING | FRAME.END_CURRENT_ROW;

function windowClauseEntry(node: unknown): string {
  const [type, f] = single(node);
  if (type !== 'WindowDef' || f.name === undefined) return unsupported('This WINDOW clause');
  return `${quoteName(f.name)} AS (${windowSpec(f)})`;
}

function over(f: Node): string {
  const bare = f.name !== undefined && f.refname === undefined && !list(f.partitionClause).length && !list(f.orderClause).length;
  if (bare) {
    if (f.frameOptions !== DEFAULT_FRAME) unsupported('This window');
    return ` OVER ${quoteName(f.name)}`;
  }
  if (f.name !== undefined) unsupported('This window');
  return ` OVER (${windowSpec(f)})`;
}

function windowSpec(f: Node): string {
  const parts: string[] = [];
  if (f.refname !== undefined) parts.push(quoteName(f.refname));
  const partition = list(f.partitionClause);
  if (partition.length) parts.push(`PARTITION BY ${partition.map(expr).join(', ')}`);
  const order = list(f.orderClause);
  if (order.length) parts.push(`ORDER BY ${order.map(sortBy).join(', ')}`);
  const frame = frameClause(f);
  if (frame) parts.push(frame);
  return parts.join(' ');
}

function frameClause(f: Node): string {
  const o = typeof f.frameOptions === 'number' ? f.frameOptions : unsupported('This window frame');
  if (!(o & FRAME.NONDEFAULT)) {
    if (o !== DEFAULT_FRAME) unsupported('This window frame');
    return '';
  }
  const mode = o & FRAME.RANGE ? 'RANGE' : o & FRAME.ROWS ? 'ROWS' : o & FRAME.GROUPS ? 'GROUPS' : unsupported('This window frame');
  const start =
    o & FRAME.START_UNBOUNDED_PRECEDING
      ? 'UNBOUNDED PRECEDING'
      : o & FRAME.START_CURRENT_ROW
        ? 'CURRENT ROW'
        : o & FRAME.START_OFFSET_PRECEDING
          ? `${expr(f.startOffset)} PRECEDING`
          : o & FRAME.START_OFFSET_FOLLOWING
            ? `${expr(f.startOffset)} FOLLOWING`
            : unsupported('This window frame');
  let out: string;
  if (o & FRAME.BETWEEN) {
    const end =
      o & FRAME.END_UNBOUNDED_FOLLOWING
        ? 'UNBOUNDED FOLLOWING'
        : o & FRAME.END_CURRENT_ROW
          ? 'CURRENT ROW'
          : o & FRAME.END_OFFSET_PRECEDING
            ? `${expr(f.endOffset)} PRECEDING`
            : o & FRAME.END_OFFSET_FOLLOWING
              ? `${expr(f.endOffset)} FOLLOWING`
              : unsupported('This window frame');
    out = `${mode} BETWEEN ${start} AND ${end}`;
  } else out = `${mode} ${start}`;
  if (o & FRAME.EXCLUDE_CURRENT_ROW) out += ' EXCLUDE CURRENT ROW';
  else if (o & FRAME.EXCLUDE_GROUP) out += ' EXCLUDE GROUP';
  else if (o & FRAME.EXCLUDE_TIES) out += ' EXCLUDE TIES';
  return out;
}

// ---------------------------------------------------------------- expressions

const BOOLEAN_TESTS: Record<string, string> = {
  IS_TRUE: 'IS TRUE',
  IS_NOT_TRUE: 'IS NOT TRUE',
  IS_FALSE: 'IS FALSE',
  IS_NOT_FALSE: 'IS NOT FALSE',
  IS_UNKNOWN: 'IS UNKNOWN',
  IS_NOT_UNKNOWN: 'IS NOT UNKNOWN',
};

const SQL_VALUE_FUNCTIONS: Record<string, [string, boolean]> = {
  SVFOP_CURRENT_DATE: ['CURRENT_DATE', false],
  SVFOP_CURRENT_TIME: ['CURRENT_TIME', false],
  SVFOP_CURRENT_TIME_N: ['CURRENT_TIME', true],
  SVFOP_CURRENT_TIMESTAMP: ['CURRENT_TIMESTAMP', false],
  SVFOP_CURRENT_TIMESTAMP_N: ['CURRENT_TIMESTAMP', true],
  SVFOP_LOCALTIME: ['LOCALTIME', false],
  SVFOP_LOCALTIME_N: ['LOCALTIME', true],
  SVFOP_LOCALTIMESTAMP: ['LOCALTIMESTAMP', false],
  SVFOP_LOCALTIMESTAMP_N: ['LOCALTIMESTAMP', true],
};

/** Operators are printed as symbols only when they are made of operator characters. */
const OPERATOR = /^[+\-*/<>=~!@#%^&|`?]{1,4}$/;

/** An operator as written: a bare symbol, or OPERATOR("pg_catalog".op) for pg_catalog's (the only schema printed). */
function operator(name: unknown): string {
  const parts = list(name);
  if (parts.length !== 1 && !(parts.length === 2 && stringOf(parts[0]) === 'pg_catalog')) return unsupported('A qualified operator');
  const sym = stringOf(parts[parts.length - 1]);
  if (!OPERATOR.test(sym) || sym.includes('--') || sym.includes('/*')) return unsupported('This operator');
  return parts.length === 2 ? `OPERATOR(${quoteName('pg_catalog')}.${sym})` : sym;
}

function integer(v: unknown): string {
  if (v === undefined) return '0';
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) return unsupported('This number');
  return String(v);
}

function expr(node: unknown): string {
  const [type, f] = single(node);
  switch (type) {
    case 'ColumnRef':
      return list(f.fields)
        .map((field) => (single(field)[0] === 'A_Star' ? '*' : quoteName(stringOf(field))))
        .join('.');
    case 'ParamRef':
      return `$${integer(f.number)}`;
    case 'A_Const':
      if (f.isnull === true) return 'NULL';
      if ('boolval' in f) return (f.boolval as Node).boolval === true ? 'TRUE' : 'FALSE';
      if ('ival' in f) return integer((f.ival as Node).ival);
      return unsupported('A literal');
    case 'A_Expr':
      return aExpr(f);
    case 'BoolExpr': {
      const args = list(f.args).map(expr);
      if (f.boolop === 'NOT_EXPR' && args.length === 1) return `(NOT ${args[0]})`;
      if ((f.boolop === 'AND_EXPR' || f.boolop === 'OR_EXPR') && args.length >= 2)
        return `(${args.join(f.boolop === 'AND_EXPR' ? ' AND ' : ' OR ')})`;
      return unsupported('This boolean expression');
    }
    case 'NullTest':
      if (f.nulltesttype === 'IS_NULL') return `(${expr(f.arg)} IS NULL)`;
      if (f.nulltesttype === 'IS_NOT_NULL') return `(${expr(f.arg)} IS NOT NULL)`;
      return unsupported('This IS NULL test');
    case 'BooleanTest': {
      const test = BOOLEAN_TESTS[String(f.booltesttype)];
      return test && Object.hasOwn(BOOLEAN_TESTS, String(f.booltesttype)) ? `(${expr(f.arg)} ${test})` : unsupported('This IS test');
    }
    case 'CoalesceExpr':
      return `COALESCE(${list(f.args).map(expr).join(', ')})`;
    case 'MinMaxExpr':
      if (f.op !== 'IS_GREATEST' && f.op !== 'IS_LEAST') return unsupported('GREATEST/LEAST');
      return `${f.op === 'IS_GREATEST' ? 'GREATEST' : 'LEAST'}(${list(f.args).map(expr).join(', ')})`;
    case 'CaseExpr': {
      let out = '(CASE';
      if (f.arg) out += ` ${expr(f.arg)}`;
      for (const when of list(f.args)) {
        const [wt, w] = single(when);
        if (wt !== 'CaseWhen') return unsupported('This CASE');
        out += ` WHEN ${expr(w.expr)} THEN ${expr(w.result)}`;
      }
      if (f.defresult) out += ` ELSE ${expr(f.defresult)}`;
      return `${out} END)`;
    }
    case 'RowExpr': {
      const args = list(f.args).map(expr);
      if (f.row_format === 'COERCE_EXPLICIT_CALL') return `ROW(${args.join(', ')})`;
      if (f.row_format === 'COERCE_IMPLICIT_CAST' && args.length >= 2) return `(${args.join(', ')})`;
      return unsupported('This row expression');
    }
    case 'A_ArrayExpr':
      return `ARRAY[${list(f.elements).map(expr).join(', ')}]`;
    case 'FuncCall':
      return funcCall(f);
    case 'TypeCast':
      return `CAST(${expr(f.arg)} AS ${typeName(f.typeName as Node)})`;
    case 'SubLink':
      return subLink(f);
    case 'SQLValueFunction': {
      const entry = Object.hasOwn(SQL_VALUE_FUNCTIONS, String(f.op))
        ? SQL_VALUE_FUNCTIONS[String(f.op)]
        : unsupported('This SQL value function');
      return entry[1] ? `${entry[0]}(${integer(f.typmod)})` : entry[0];
    }
    case 'GroupingSet':
      return groupingSet(f);
    default:
      return unsupported(`The construct ${type}`);
  }
}

function aExpr(f: Node): string {
  const l = () => expr(f.lexpr);
  const r = () => expr(f.rexpr);
  const items = () => {
    const [type, lf] = single(f.rexpr);
    if (type !== 'List') return unsupported('This list');
    return list(lf.items).map(expr);
  };
  switch (f.kind) {
    case 'AEXPR_OP': {
      const op = operator(f.name);
      if (f.rexpr === undefined) return unsupported('A postfix operator');
      return f.lexpr === undefined ? `(${op} ${r()})` : `(${l()} ${op} ${r()})`;
    }
    case 'AEXPR_OP_ANY':
      return `(${l()} ${operator(f.name)} ANY (${r()}))`;
    case 'AEXPR_OP_ALL':
      return `(${l()} ${operator(f.name)} ALL (${r()}))`;
    case 'AEXPR_DISTINCT':
      return `(${l()} IS DISTINCT FROM ${r()})`;
    case 'AEXPR_NOT_DISTINCT':
      return `(${l()} IS NOT DISTINCT FROM ${r()})`;
    case 'AEXPR_NULLIF':
      return `NULLIF(${l()}, ${r()})`;
    case 'AEXPR_IN': {
      const op = operator(f.name);
      if (op !== '=' && op !== '<>') return unsupported('This IN');
      return `(${l()} ${op === '=' ? 'IN' : 'NOT IN'} (${items().join(', ')}))`;
    }
    case 'AEXPR_LIKE':
    case 'AEXPR_ILIKE': {
      const op = operator(f.name);
      const words: Record<string, string> = { '~~': 'LIKE', '!~~': 'NOT LIKE', '~~*': 'ILIKE', '!~~*': 'NOT ILIKE' };
      const word = Object.hasOwn(words, op) ? words[op] : unsupported('This LIKE');
      if ((f.kind === 'AEXPR_LIKE') !== (op === '~~' || op === '!~~')) unsupported('This LIKE');
      return `(${l()} ${word} ${r()})`;
    }
    case 'AEXPR_BETWEEN':
    case 'AEXPR_NOT_BETWEEN':
    case 'AEXPR_BETWEEN_SYM':
    case 'AEXPR_NOT_BETWEEN_SYM': {
      const bounds = items();
      if (bounds.length !== 2) return unsupported('This BETWEEN');
      const word = {
        AEXPR_BETWEEN: 'BETWEEN',
        AEXPR_NOT_BETWEEN: 'NOT BETWEEN',
        AEXPR_BETWEEN_SYM: 'BETWEEN SYMMETRIC',
        AEXPR_NOT_BETWEEN_SYM: 'NOT BETWEEN SYMMETRIC',
      }[f.kind];
      return `(${l()} ${word} ${bounds[0]} AND ${bounds[1]})`;
    }
    default:
      return unsupported('This operator');
  }
}

function subLink(f: Node): string {
  const sub = subquery(f.subselect);
  switch (f.subLinkType) {
    case 'EXISTS_SUBLINK':
      return `(EXISTS (${sub}))`;
    case 'EXPR_SUBLINK':
      return `(${sub})`;
    case 'ARRAY_SUBLINK':
      return `ARRAY(${sub})`;
    case 'ANY_SUBLINK':
      return list(f.operName).length ? `(${expr(f.testexpr)} ${operator(f.operName)} ANY (${sub}))` : `(${expr(f.testexpr)} IN (${sub}))`;
    case 'ALL_SUBLINK':
      return `(${expr(f.testexpr)} ${operator(f.operName)} ALL (${sub}))`;
    default:
      return unsupported('This kind of subquery');
  }
}

function groupingSet(f: Node): string {
  const content = () => list(f.content).map(expr).join(', ');
  switch (f.kind) {
    case 'GROUPING_SET_EMPTY':
      return '()';
    case 'GROUPING_SET_ROLLUP':
      return `ROLLUP (${content()})`;
    case 'GROUPING_SET_CUBE':
      return `CUBE (${content()})`;
    case 'GROUPING_SET_SETS':
      return `GROUPING SETS (${content()})`;
    default:
      return unsupported('This grouping set');
  }
}

function typeName(t: Node | undefined): string {
  if (!t || t.setof || t.pct_type || (t.typemod !== undefined && t.typemod !== -1)) return unsupported('This type');
  // One dimension without a size (text[], int[]) is all the printer writes; the re-parse compares the rest.
  const bounds = list(t.arrayBounds);
  if (bounds.length > 1) return unsupported('This array type');
  if (bounds.length === 1) {
    const [type, b] = single(bounds[0]);
    if (type !== 'Integer' || b.ival !== -1) return unsupported('This array type');
  }
  const names = list(t.names).map((n) => quoteName(stringOf(n)));
  if (!names.length) return unsupported('This type');
  const mods = list(t.typmods).map((m) => {
    const [type, c] = single(m);
    if (type !== 'A_Const' || !('ival' in c)) return unsupported('A type modifier');
    return integer((c.ival as Node).ival);
  });
  return `${names.join('.')}${mods.length ? `(${mods.join(', ')})` : ''}${bounds.length ? '[]' : ''}`;
}

/** SQL-syntax forms (EXTRACT(x FROM y) and the like) that the parser turns into pg_catalog calls. */
function sqlSyntaxCall(name: string, args: unknown[]): string {
  switch (name) {
    case 'extract': {
      const [type, c] = single(args[0]);
      if (args.length !== 2 || type !== 'A_Const' || typeof (c.sval as Node | undefined)?.sval !== 'string')
        return unsupported('This EXTRACT');
      return `EXTRACT(${quoteName((c.sval as Node).sval)} FROM ${expr(args[1])})`;
    }
    case 'position':
      if (args.length !== 2) return unsupported('This POSITION');
      return `POSITION(${expr(args[1])} IN ${expr(args[0])})`;
    case 'substring':
      if (args.length === 2) return `SUBSTRING(${expr(args[0])} FROM ${expr(args[1])})`;
      if (args.length === 3) return `SUBSTRING(${expr(args[0])} FROM ${expr(args[1])} FOR ${expr(args[2])})`;
      return unsupported('This SUBSTRING');
    case 'btrim':
    case 'ltrim':
    case 'rtrim': {
      const side = name === 'btrim' ? 'BOTH' : name === 'ltrim' ? 'LEADING' : 'TRAILING';
      if (!args.length) return unsupported('This TRIM');
      return `TRIM(${side} FROM ${args.map(expr).join(', ')})`;
    }
    case 'timezone':
      if (args.length === 2) return `(${expr(args[1])} AT TIME ZONE ${expr(args[0])})`;
      if (args.length === 1) return `(${expr(args[0])} AT LOCAL)`;
      return unsupported('This AT TIME ZONE');
    default:
      return unsupported(`The SQL form of ${name}`);
  }
}

function funcCall(f: Node): string {
  const parts = list(f.funcname).map(stringOf);
  if (!parts.length || f.func_variadic || (list(f.agg_order).length && f.agg_star)) return unsupported('This function call');
  const args = list(f.args);
  let call: string;
  if (f.funcformat === 'COERCE_SQL_SYNTAX') {
    if (
      parts.length !== 2 ||
      parts[0] !== 'pg_catalog' ||
      f.agg_star ||
      f.agg_distinct ||
      f.agg_order ||
      f.agg_filter ||
      f.over ||
      f.agg_within_group
    )
      return unsupported('This function call');
    return sqlSyntaxCall(parts[1], args);
  }
  if (f.funcformat !== 'COERCE_EXPLICIT_CALL' && f.funcformat !== undefined) return unsupported('This function call');
  const order = list(f.agg_order);
  const inner = f.agg_star ? '*' : args.map(expr).join(', ');
  call = `${parts.map(quoteName).join('.')}(${f.agg_distinct ? 'DISTINCT ' : ''}${inner}`;
  if (order.length && !f.agg_within_group) call += ` ORDER BY ${order.map(sortBy).join(', ')}`;
  call += ')';
  if (f.agg_within_group) {
    if (!order.length) return unsupported('WITHIN GROUP');
    call += ` WITHIN GROUP (ORDER BY ${order.map(sortBy).join(', ')})`;
  }
  if (f.agg_filter) call += ` FILTER (WHERE ${expr(f.agg_filter)})`;
  if (f.over) call += over(f.over as Node);
  return call;
}

function isEmptyObject(v: unknown): boolean {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0;
}

// ---------------------------------------------------------------- comparison

/** Fields that say where a node stood in the text, not what it is. */
const POSITION_FIELDS: ReadonlySet<string> = new Set([
  'location',
  'rexpr_list_start',
  'rexpr_list_end',
  'list_start',
  'list_end',
  'stmt_location',
  'stmt_len',
]);

/**
 * Structural equality of two parse trees, ignoring only where nodes stood in the text.
 * Returns null when equal, else the path of the first difference (for the defect log).
 */
export function treeDifference(a: unknown, b: unknown): string | null {
  return sameTree(a, b) ? null : differenceAt(a, b, '$');
}

/** The fast check: no allocation, stops at the first difference. */
function sameTree(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameTree(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ao = a as Node;
  const bo = b as Node;
  let count = 0;
  for (const k in ao) {
    if (k === 'location' || POSITION_FIELDS.has(k)) continue;
    if (!Object.hasOwn(bo, k) || !sameTree(ao[k], bo[k])) return false;
    count++;
  }
  for (const k in bo) if (k !== 'location' && !POSITION_FIELDS.has(k)) count--;
  return count === 0;
}

/** Where two trees differ (only called once they do). */
function differenceAt(a: unknown, b: unknown, path: string): string | null {
  if (sameTree(a, b)) return null;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) return path;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    if (a.length !== bb.length) return `${path}.length`;
    for (let i = 0; i < a.length; i++) {
      const d = differenceAt(a[i], bb[i], `${path}[${i}]`);
      if (d) return d;
    }
    return path;
  }
  const ao = a as Node;
  const bo = b as Node;
  for (const k of new Set([...Object.keys(ao), ...Object.keys(bo)])) {
    if (POSITION_FIELDS.has(k)) continue;
    if (!Object.hasOwn(ao, k) || !Object.hasOwn(bo, k)) return `${path}.${k}`;
    const d = differenceAt(ao[k], bo[k], `${path}.${k}`);
    if (d) return d;
  }
  return path;
}

/** A deep copy of a parse tree (plain JSON data: objects, arrays, scalars). */
export function cloneTree<T>(v: T): T {
  if (Array.isArray(v)) return v.map(cloneTree) as T;
  if (v !== null && typeof v === 'object') {
    const out: Node = {};
    for (const k in v as Node) out[k] = cloneTree((v as Node)[k]);
    return out as T;
  }
  return v;
}
