import { toCsv } from './csv';

describe('toCsv', () => {
  it('quotes per RFC 4180', () => {
    expect(
      toCsv(
        ['a', 'b'],
        [
          { a: 'x,y', b: 'say "hi"' },
          { a: 'line\nbreak', b: null },
          { a: 1, b: true },
        ],
      ),
    ).toBe('a,b\r\n"x,y","say ""hi"""\r\n"line\nbreak",\r\n1,true\r\n');
  });
});
