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
