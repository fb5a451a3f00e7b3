/** Longest tenant or user id a store or a worker takes. */
export const MAX_SCOPE_ID_LENGTH = 200;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/**
 * What shows as nothing, or as something else, on a screen: format characters (Cf: zero-width spaces and joiners,
 * bidirectional overrides such as U+202E, the BOM), other default-ignorable code points (variation selectors, the
 * Hangul fillers, U+034F), line and paragraph separators, private-use and unassigned code points, and lone surrogates.
 * `lee\u200b` looks like `lee` and is another user; `\u202e` turns a name around on screen.
 */
const INVISIBLE = /[\p{Cf}\p{Default_Ignorable_Code_Point}\p{Zl}\p{Zp}\p{Co}\p{Cn}\p{Cs}]/u;
const EDGE_SPACE = /^\s|\s$/;

/**
 * Why `value` is not a tenant or user id, or null when it is one. One rule for every library and every door a tenant,
 * user or approver id comes in by (tokens, MCP principals, the CLI, jobs, background runs, approvals): missing, not a
 * string, empty or whitespace, '0' (there is no wildcard tenant or user, ever: the spec's tenant 0 is the bug we must
 * not have), longer than MAX_SCOPE_ID_LENGTH, holding a NUL or control character (C0, DEL, C1), holding a character
 * that shows as nothing or as something else (see INVISIBLE; named by its code point), beginning or ending with a
 * blank, or not in Unicode normalization form C (`e\u0301` and `é` are one name on screen: only the composed form is
 * an id). So two ids that differ are two ids a person can tell apart. A read with such an id finds nothing; a write is
 * refused with the problem as its message (the problem never repeats the value).
 */
export function scopeIdProblem(name: string, value: unknown): string | null {
  if (typeof value !== 'string') return `${name} is ${value === undefined ? 'missing' : `a ${typeof value}, not a string`}`;
  if (!value.trim()) return `${name} is empty`;
  if (value.trim() === '0') return `${name} '0' is not an id (there is no wildcard tenant or user)`;
  if (value.length > MAX_SCOPE_ID_LENGTH) return `${name} is longer than ${MAX_SCOPE_ID_LENGTH} characters`;
  if (CONTROL.test(value)) return `${name} holds a NUL or control character`;
  const invisible = INVISIBLE.exec(value);
  if (invisible)
    return `${name} holds U+${codePoint(invisible[0])}, a character that shows as nothing or as something else: ids must be plain visible text`;
  if (EDGE_SPACE.test(value)) return `${name} begins or ends with a blank: send the id without surrounding blanks`;
  if (value.normalize('NFC') !== value)
    return `${name} is not in Unicode normalization form C: send the id as String.normalize('NFC') writes it`;
  return null;
}

/** Whether `value` is a tenant or user id under scopeIdProblem's rule. */
export function isScopeId(value: unknown): value is string {
  return scopeIdProblem('id', value) === null;
}

function codePoint(char: string): string {
  return (char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0');
}
