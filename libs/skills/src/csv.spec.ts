import { runsAsFormula, spreadsheetCells as cells } from './__fixtures__/spreadsheet';
import { csvField, toCsv } from './csv';

describe('toCsv: the one CSV writer of every export', () => {
  it('writes RFC 4180: a header line, CRLF line ends, every field quoted and quotes doubled, nulls empty', () => {
    expect(
      toCsv(
        ['a', 'b'],
        [
          { a: 'x,y', b: 'say "hi"' },
          { a: 'line\nbreak', b: null },
          { a: 1, b: true },
          { a: new Date('2026-01-02T03:04:05Z'), b: { k: [1] } },
        ],
      ),
    ).toBe('"a","b"\r\n"x,y","say ""hi"""\r\n"line\nbreak",\r\n"1","true"\r\n"2026-01-02T03:04:05.000Z","{""k"":[1]}"\r\n');
  });

  it("keeps a field whole in a ';'-separated spreadsheet (attack: tool name x;=cmd|' /C calc'!A0)", () => {
    const csv = toCsv(['skill', 'agent'], [{ skill: "x;=cmd|' /C calc'!A0", agent: 'a\tb' }]);
    const line = csv.split('\r\n')[1];
    expect(cells(line, ',')).toEqual(["x;=cmd|' /C calc'!A0", 'a\tb']);
    // Whatever the spreadsheet splits on, the quoted field is never cut at its ';' or tab: no cell starts with '='.
    for (const separator of [',', ';', '\t']) {
      const split = cells(line, separator);
      expect([separator, split[0].startsWith('x;=cmd')]).toEqual([separator, true]);
      expect([separator, split.filter(runsAsFormula)]).toEqual([separator, []]);
    }
  });

  it.each([
    ['=HYPERLINK("http://evil")'],
    ['+1+cmd|x'],
    ['-2+3'],
    ['@SUM(A1)'],
    ['\t=1'],
    ['\r=1'],
    [' =cmd'],
    ['  @cmd'],
    ['\u00a0=cmd'],
    ['\u3000=cmd'],
    ['\u200b=cmd'],
    ['\n=cmd'],
    ['\uff1dcmd'],
    ['\uff0b1'],
    ['\uff0d1'],
    ['\uff20cmd'],
  ])('neutralises a formula lead after leading blanks (attack: %j)', (value) => {
    const [cell] = cells(csvField(value), ',');
    expect(cell).toBe(`'${value}`);
    expect(runsAsFormula(cell)).toBe(false);
  });

  it.each([['-12.50'], ['+3'], ['1e-5'], ['0'], [-7], ['alice'], ['a=b'], ['x-y'], ['mail@example.com']])(
    'leaves %j as it is (a number, or text without a formula lead)',
    (value) => {
      expect(cells(csvField(value), ',')).toEqual([String(value)]);
    },
  );

  it('reads only own properties of a row', () => {
    const row = Object.create({ inherited: '=evil' }) as Record<string, unknown>;
    expect(toCsv(['inherited'], [row])).toBe('"inherited"\r\n\r\n');
  });
});
