/**
 * What a spreadsheet would start as a formula: a field that begins with a tab or a carriage return, or whose first
 * character after any leading blanks, controls or format characters is `=`, `+`, `-` or `@` (or their full-width forms,
 * which some spreadsheets read as the same).
 */
const FORMULA_LEAD = /^(?:[\t\r]|[\p{White_Space}\p{Cc}\p{Cf}]*[=+\-@\uFF1D\uFF0B\uFF0D\uFF20])/u;
/** A plain decimal number (`-12.50`, `+3`, `1e-5`): what a spreadsheet reads as a number, never as a formula. */
const PLAIN_NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * One CSV field that a spreadsheet reads as the text it is, in every locale: always quoted (quotes doubled), so a `;`,
 * a tab, a comma, a line break or a leading blank never starts a field of its own, whatever separator the spreadsheet
 * splits on; and a formula lead (see FORMULA_LEAD) gets a leading `'`, so it is never run as a formula. Null and
 * undefined are an empty field; a Date is its ISO 8601 text; an object or array is its JSON text.
 */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = value instanceof Date ? value.toISOString() : typeof value === 'object' ? JSON.stringify(value) : String(value);
  const safe = FORMULA_LEAD.test(text) && !PLAIN_NUMBER.test(text) ? `'${text}` : text;
  return `"${safe.replace(/"/g, '""')}"`;
}

/**
 * The rows as CSV (RFC 4180: a header line, CRLF line ends, every field quoted), each field written by csvField: the
 * one CSV writer of every export (the audit export, report.generate). A row's value is read from its own properties only.
 */
export function toCsv(columns: readonly string[], rows: ReadonlyArray<Readonly<Record<string, unknown>>>): string {
  const lines = [columns.map(csvField).join(',')];
  for (const row of rows) lines.push(columns.map((c) => csvField(Object.hasOwn(row, c) ? row[c] : undefined)).join(','));
  return `${lines.join('\r\n')}\r\n`;
}
