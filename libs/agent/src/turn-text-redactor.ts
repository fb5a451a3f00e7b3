import type { Redactor } from '@zmodu/guard';

/** Raw characters of released text that are redacted again with what follows, so that a match that starts there is seen. */
const CONTEXT_CHARS = 256;

const WHITESPACE = /\s/;
/** What a card number written in groups is made of. */
const CARD_CHAR = /[\d -]/;

/**
 * The text deltas of one model turn as a caller reads them: redacted as one text, never piece by piece. A secret that
 * the model's stream splits across deltas ('sk-proj-Ab' then 'Cd…') is masked. Text is released up to whitespace only:
 *  - the last word is held until whitespace follows it (a key, a token, a JWT or an address is one word, however long);
 *  - a run of digits in groups before the cut (a card number being written) is held until a word that is not digits
 *    follows it;
 *  - so are the last `redactor.streamHoldBack` characters (patterns of the application's own may span words);
 *  - and only when redacting what was received so far leaves the released part as it is (no match reaches across).
 * Each redaction covers the held text and the last CONTEXT_CHARS released (so `password: ` or `Bearer ` before a value
 * that comes later is seen): the work per delta is bounded, not the whole turn's. `end()` releases the rest.
 */
export class TurnTextRedactor {
  /** The text kept: the last CONTEXT_CHARS released (the context) and everything held. */
  private raw = '';
  /** Where the held text starts in `raw`. */
  private settled = 0;
  /** Positions in `raw` of whitespace in the held text, ascending. */
  private spaces: number[] = [];
  private readonly holdBack: number;

  constructor(private readonly redactor: Redactor) {
    this.holdBack = redactor.streamHoldBack;
  }

  /** Takes a delta of the model; returns the redacted text that may be shown now ('' while it is held). */
  push(piece: string): string {
    const offset = this.raw.length;
    this.raw += piece;
    for (let i = 0; i < piece.length; i++) if (WHITESPACE.test(piece[i])) this.spaces.push(offset + i);
    const limit = this.raw.length - this.holdBack - 1;
    let k = this.spaces.length - 1;
    while (k >= 0 && this.spaces[k] > limit) k--;
    if (k < 0) return '';
    let cut = this.spaces[k] + 1;
    // Digits in groups right before the cut may be the start of a card number: held with what follows.
    let start = cut;
    while (start > this.settled && CARD_CHAR.test(this.raw[start - 1])) start--;
    while (start < cut && WHITESPACE.test(this.raw[start])) start++;
    if (/\d/.test(this.raw.slice(start, cut))) {
      // With the word the digits are glued to, if any ('CC-4111…' is a card number too).
      while (start > this.settled && !WHITESPACE.test(this.raw[start - 1])) start--;
      cut = start;
      while (k >= 0 && this.spaces[k] >= cut) k--;
    }
    if (cut <= this.settled) return '';
    const head = this.afterContext(cut);
    const whole = this.afterContext(this.raw.length);
    // A match reaches across the cut (or back into the context): hold it all for now.
    if (!head.exact || !whole.exact || !whole.text.startsWith(head.text)) return '';
    this.spaces = this.spaces.slice(k + 1);
    this.settle(cut);
    return head.text;
  }

  /** The turn ended: the redacted rest of its text. */
  end(): string {
    const rest = this.afterContext(this.raw.length).text;
    this.spaces = [];
    this.settle(this.raw.length);
    return rest;
  }

  private settle(cut: number): void {
    const drop = Math.max(0, cut - CONTEXT_CHARS);
    this.raw = this.raw.slice(drop);
    this.settled = cut - drop;
    this.spaces = this.spaces.map((p) => p - drop);
  }

  /**
   * The redaction of raw[settled, to) as it reads after the context: the two are redacted together and the context's
   * own redaction is cut off the front. Not exact when a match reaches back into the context (what was shown of it
   * stays shown): then the text from where the two redactions part. Redactions here are not counted in the metrics
   * (the step's text is, once).
   */
  private afterContext(to: number): { readonly text: string; readonly exact: boolean } {
    const context = this.redactor.redactText(this.raw.slice(0, this.settled), { count: false });
    const both = this.redactor.redactText(this.raw.slice(0, to), { count: false });
    if (both.startsWith(context)) return { text: both.slice(context.length), exact: true };
    let common = 0;
    while (common < context.length && common < both.length && context[common] === both[common]) common++;
    return { text: both.slice(common), exact: false };
  }
}
