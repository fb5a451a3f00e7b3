/**
 * The cells of a CSV text as a spreadsheet splitting on `separator` reads them: quoted parts kept whole (quotes
 * doubled inside), line breaks outside quotes ending a cell too. What the CSV specs and the fuzzers check exports with.
 */
export function spreadsheetCells(text: string, separator: string): string[] {
  const cells: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted && c === '"' && text[i + 1] === '"') {
      cell += '"';
      i++;
    } else if (c === '"') quoted = !quoted;
    else if (!quoted && (c === separator || c === '\n' || (c === '\r' && text[i + 1] === '\n'))) {
      cells.push(cell);
      cell = '';
      if (c === '\r') i++;
    } else cell += c;
  }
  return [...cells, cell];
}

/**
 * Whether a spreadsheet would start this cell as a formula: a tab or CR first, or `=`, `+`, `-`, `@` (or a full-width
 * one) after the blanks, controls and format characters some spreadsheets skip; a plain number is a number.
 */
export const runsAsFormula = (cell: string): boolean =>
  /^[\t\r]|^[\p{White_Space}\p{Cc}\p{Cf}]*[=+\-@\uff1d\uff0b\uff0d\uff20]/u.test(cell) &&
  !/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(cell);
