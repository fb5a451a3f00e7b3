import { refuse } from './sql-refusal';

export interface Placeholders {
  /** The statement with every `?` turned into `$n`. */
  readonly text: string;
  /** How many parameters the statement uses (the highest `$n`). */
  readonly count: number;
}

/** Deepest nesting of parentheses, brackets and CASE ... END a statement may have. */
export const MAX_NESTING = 64;
/** Most operators (symbols, NOT, IS, AT, ::) a statement may have: each can deepen the parse tree. */
export const MAX_OPERATORS = 256;

/** Keywords that nest an expression one level deeper without parentheses. */
const DEEPENING_KEYWORDS: ReadonlySet<string> = new Set(['not', 'is', 'at', 'like', 'ilike', 'between', 'in', 'and', 'or']);

/**
 * A lexical pass before parsing: refuses comments, `;`, string and dollar-quoted literals
 * (values come only as parameters), and turns `?` placeholders into `$1..$n`.
 * Quoted identifiers are skipped intact. `?` and `$n` may not be mixed. A statement nested
 * deeper than MAX_NESTING or with more than MAX_OPERATORS operators is refused as
 * `too_complex` here, before the parser (whose tree depth it bounds) ever sees it.
 */
export function bindPlaceholders(sql: string): Placeholders {
  let out = '';
  let copied = 0;
  let question = 0;
  let numbered = 0;
  let depth = 0;
  let operators = 0;
  let i = 0;
  const n = sql.length;
  const deeper = () => {
    if (++depth > MAX_NESTING)
      refuse('too_complex', `The statement nests deeper than ${MAX_NESTING} levels: flatten it (use WITH, or fewer nested subqueries).`);
  };
  const operator = () => {
    if (++operators > MAX_OPERATORS) refuse('too_complex', `The statement has more than ${MAX_OPERATORS} operators: simplify it.`);
  };
  while (i < n) {
    const c = sql[i];
    if (c === '"') {
      i = closingQuote(sql, i) + 1;
      continue;
    }
    if (c === "'") refuse('literal_not_allowed', 'String literals are not allowed: use ? placeholders and pass the values in args.');
    if (c === '-' && sql[i + 1] === '-') refuse('comment_not_allowed', 'Comments are not allowed in db.query.');
    if (c === '/' && sql[i + 1] === '*') refuse('comment_not_allowed', 'Comments are not allowed in db.query.');
    if (c === ';') refuse('multiple_statements', 'Send exactly one SELECT statement, without ";".');
    if (c === '\\') refuse('literal_not_allowed', 'Backslashes are not allowed outside quoted identifiers.');
    if (c === '?') {
      // Only a ? changes: copy what came before it, then its number.
      question++;
      out += `${sql.slice(copied, i)}$${question}`;
      copied = ++i;
      continue;
    }
    if (c === '$') {
      const m = /^\$(\d{1,3})(?![0-9A-Za-z_$])/.exec(sql.slice(i, i + 5));
      if (!m) refuse('literal_not_allowed', 'Dollar-quoted literals are not allowed: use ? placeholders.');
      const num = Number(m![1]);
      if (num < 1) refuse('bad_placeholder', 'Parameters are numbered from $1.');
      numbered = Math.max(numbered, num);
      i += m![0].length;
      continue;
    }
    if (isIdentStart(c)) {
      // Identifiers and keywords are copied whole, so that `$` inside one (legal in PostgreSQL) is not taken for a parameter.
      let j = i + 1;
      while (j < n && isIdentPart(sql[j])) j++;
      const word = sql.slice(i, j);
      const lower = word.toLowerCase();
      if (lower === 'case') deeper();
      else if (lower === 'end') depth = Math.max(0, depth - 1);
      else if (DEEPENING_KEYWORDS.has(lower)) operator();
      i = j;
      continue;
    }
    if (c === '(' || c === '[') deeper();
    else if (c === ')' || c === ']') depth = Math.max(0, depth - 1);
    else if (OPERATOR_CHARS.has(c) && !OPERATOR_CHARS.has(sql[i - 1] ?? '')) operator(); // a run of operator characters is one operator
    i++;
  }
  out += sql.slice(copied);
  if (question > 0 && numbered > 0) refuse('bad_placeholder', 'Use either ? placeholders or $1..$n, not both.');
  return { text: out, count: question || numbered };
}

const OPERATOR_CHARS: ReadonlySet<string> = new Set(['+', '-', '*', '/', '<', '>', '=', '~', '!', '@', '#', '%', '^', '&', '|', '`', ':']);

function closingQuote(sql: string, start: number): number {
  let i = start + 1;
  while (i < sql.length) {
    if (sql[i] === '"') {
      if (sql[i + 1] === '"') {
        i += 2;
        continue;
      }
      return i;
    }
    i++;
  }
  return refuse('syntax_error', 'Unterminated quoted identifier.');
}

function isIdentStart(c: string): boolean {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_' || c > '\x7f';
}

function isIdentPart(c: string): boolean {
  return isIdentStart(c) || (c >= '0' && c <= '9') || c === '$';
}
