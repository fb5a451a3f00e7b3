import { Redactor } from '@zmodu/guard';
import { STREAM_PATTERN_HOLD_BACK } from '@zmodu/guard/internal';
import { TurnTextRedactor } from './turn-text-redactor';

const OPENAI_KEY = 'sk-proj-abcdefghijklmnopqrstuvwxyz012345';
const JWT =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkphbmUgRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c';
const VISA = '4111 1111 1111 1111';
const REGISTERED = 'registered-secret-value-0042';

/** Every way to cut `text` into deltas that this test tries: each size from 1 to 9, and every single cut point. */
function splits(text: string): string[][] {
  const out: string[][] = [];
  for (let size = 1; size <= 9; size++) {
    const pieces: string[] = [];
    for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
    out.push(pieces);
  }
  for (let cut = 1; cut < text.length; cut++) out.push([text.slice(0, cut), text.slice(cut)]);
  return out;
}

function stream(redactor: Redactor, pieces: readonly string[]): { shown: string[]; all: string } {
  const turn = new TurnTextRedactor(redactor);
  const shown = pieces.map((p) => turn.push(p));
  shown.push(turn.end());
  return { shown, all: shown.join('') };
}

describe('TurnTextRedactor: a turn streamed in deltas is redacted as one text', () => {
  const redactor = new Redactor();
  redactor.addSecrets([REGISTERED, 'correct horse battery staple']);
  const filler = 'The quote for ACME is in; the desk will confirm the size before the order goes out today. ';

  // What the model writes, and the part of it that is the secret (a key=value pair keeps its name).
  const secrets: Array<[string, string, string]> = [
    ['an API key', OPENAI_KEY, OPENAI_KEY],
    ['a JWT', JWT, JWT],
    ['a card number written in groups', VISA, VISA],
    ['a card number glued to a label', `CC-${VISA.replace(/ /g, '-')}`, VISA.replace(/ /g, '-')],
    ['a key=value secret', 'api_key = hunter2hunter2', 'hunter2hunter2'],
    ['a bearer token', 'Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123456789', 'abcdefghijklmnopqrstuvwxyz0123456789'],
    ['a registered secret value', REGISTERED, REGISTERED],
    ['a registered secret value with spaces', 'correct horse battery staple', 'horse battery'],
  ];
  it.each(secrets)(
    '%s split across deltas at any point never shows, and the deltas add up to the redacted text',
    (_name, written, secret) => {
      const text = `${filler}${filler}Use ${written} for it. ${filler}${filler}`;
      const expected = redactor.redactText(text);
      expect(expected).not.toContain(secret);
      for (const pieces of splits(text)) {
        const { shown, all } = stream(redactor, pieces);
        expect(all).toBe(expected);
        // No delta, and no two deltas side by side, hold any 6-character run of the secret's own characters.
        for (const piece of shown) for (let i = 0; i + 6 <= secret.length; i += 3) expect(piece).not.toContain(secret.slice(i, i + 6));
      }
    },
  );

  it('releases each word once whitespace follows it (a short answer streams too), holding only what may be a secret', () => {
    const plain = new Redactor();
    const turn = new TurnTextRedactor(plain);
    expect(turn.push('Let ')).toBe('Let ');
    expect(turn.push('me chec')).toBe('me ');
    expect(turn.push('k. Card 4111 ')).toBe('check. Card ');
    expect(turn.push('1111 ')).toBe('');
    expect(turn.push('1111 1111 is')).toBe('');
    expect(turn.push(' on fi')).toBe('[redacted] is on ');
    expect(turn.end()).toBe('fi');
  });

  it('holds back the last STREAM_PATTERN_HOLD_BACK characters when the application has patterns of its own', () => {
    const own = new Redactor({ patterns: [/ACCT \d{3} \d{3}/] });
    expect(own.streamHoldBack).toBe(STREAM_PATTERN_HOLD_BACK);
    const text = Array.from({ length: 200 }, (_, i) => `word${i}`).join(' ');
    const turn = new TurnTextRedactor(own);
    const released: string[] = [];
    for (const piece of text.match(/\S+\s*/g)!) {
      const out = turn.push(piece);
      if (out) released.push(out);
    }
    const held = turn.end();
    expect(released.join('') + held).toBe(text);
    expect(released.length).toBeGreaterThan(150);
    expect(held.length).toBeGreaterThanOrEqual(STREAM_PATTERN_HOLD_BACK);
    expect(held.length).toBeLessThanOrEqual(STREAM_PATTERN_HOLD_BACK + 2 * 'word199 '.length); // and the words it cuts into
  });

  it('leaves the redactor metrics alone (the step text that holds the same secret counts it, once)', () => {
    const counted = new Redactor();
    const text = `${filler}key ${OPENAI_KEY} and card ${VISA} ${filler}`;
    stream(counted, text.match(/\S+\s*/g)!);
    expect(counted.metrics().total).toBe(0);
    counted.redactText(text);
    expect(counted.metrics()).toMatchObject({ secrets: 1, cards: 1, total: 2 });
  });

  it('holds text without whitespace whole until whitespace follows it, however long', () => {
    const blob = 'A'.repeat(5000);
    const turn = new TurnTextRedactor(redactor);
    for (let i = 0; i < blob.length; i += 7) expect(turn.push(blob.slice(i, i + 7))).toBe('');
    expect(turn.end()).toBe(blob);
  });

  it('redacts with patterns of the application own, as the step text is', () => {
    const own = new Redactor({ patterns: [/ACCT-\d{6}/, /sort code \d\d-\d\d-\d\d/] });
    const text = `${filler}${filler}credit ACCT-123456 now, sort code 12-34-56 ${filler}`;
    for (const pieces of splits(text)) expect(stream(own, pieces).all).toBe(own.redactText(text));
  });
});
