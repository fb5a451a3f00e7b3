/**
 * What went wrong, as text, from anything thrown: an Error's message, a string, or whatever `String()` makes of
 * it. Never throws itself (an object with no prototype, or a hostile `toString`, would make `String()` throw).
 */
export function safeText(err: unknown): string {
  try {
    if (err instanceof Error) return String(err.message);
    return String(err);
  } catch {
    return 'an unprintable value was thrown';
  }
}

/** Control and format characters, line and paragraph separators: never shown as they are in a line we write. */
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\u2028\u2029]+/gu;

/**
 * `text` as one printable line of at most `max` characters (code points): control and format characters and line
 * breaks become a space, runs of blanks one, and a longer text is cut with '…'. Redact before calling this, never
 * after: a secret cut in two would no longer be recognised.
 */
export function oneLine(text: string, max: number): string {
  const line = text
    .replace(UNPRINTABLE, ' ')
    .replace(/\s{2,}/g, ' ')
    .trim();
  if (line.length <= max) return line;
  const points = Array.from(line);
  return points.length <= max ? line : `${points.slice(0, max - 1).join('')}…`;
}

/** The first line of `text` (up to a line break, also one written as the two characters `\n` in JSON text). */
export function firstLine(text: string): string {
  return text.split(/\r\n|[\r\n\u2028\u2029\u0085]|\\r\\n|\\n/, 1)[0];
}
