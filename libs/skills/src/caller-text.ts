import { SKILL_NAME_MAX_LENGTH } from './skill-options';

/** Control and format characters, line and paragraph separators: a name with them could forge a log line or hide a letter. */
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\u2028\u2029]/gu;
/** The longest text of a caller-chosen name that is redacted before it is cut (a secret longer than that is cut unseen). */
const REDACTED_PREFIX_MAX_LENGTH = 1024;

/**
 * A name a caller chose (a model's tool name, an MCP client's), as it may be audited, logged, traced and returned:
 * at most `max` characters (code points; cut with '…'), each control or format character shown as U+FFFD, `redact`
 * applied to it before it is cut. A registered skill's name passes as it is; this is for the names that are not.
 */
export function boundedName(name: unknown, redact: (text: string) => string = (t) => t, max = SKILL_NAME_MAX_LENGTH): string {
  let text: string;
  try {
    text = typeof name === 'string' ? name : String(name);
  } catch {
    text = '';
  }
  const shown = redact(text.slice(0, REDACTED_PREFIX_MAX_LENGTH)).replace(UNPRINTABLE, '\ufffd');
  const points = Array.from(shown);
  if (points.length <= max && text.length <= REDACTED_PREFIX_MAX_LENGTH) return shown;
  return `${points.slice(0, max - 1).join('')}…`;
}
