import { InvalidRedactionOptionsException } from '../exceptions/invalid-redaction-options.exception';
import { ownOptions } from '@zmodu/core';
import { RedactionMetrics, RedactionOptions } from './redaction-options';

type Kind = 'secrets' | 'tokens' | 'cards' | 'emails' | 'patterns';

/** A text rule: each match of `re` becomes what `replace` says (null keeps the match). */
interface TextRule {
  readonly kind: Kind;
  readonly re: RegExp;
  readonly replace: (match: string, groups: string[], where: { offset: number; input: string }) => string | null;
}

/** Deeper than this, a value's subtree is masked whole rather than walked (fail closed, no stack to overflow). */
export const MAX_REDACTION_DEPTH = 64;
const MAX_REPLACEMENT_LENGTH = 200;
/** Registered secret values shorter than this are not registered: they would mask ordinary words (a local server's key 'ollama'). */
export const MIN_SECRET_VALUE_LENGTH = 8;
/** Registered secret values longer than this are not registered (no credential is that long; text is searched for each). */
export const MAX_SECRET_VALUE_LENGTH = 4096;
/** Characters a stream holds back for patterns of the application's own (see Redactor.streamHoldBack). */
export const STREAM_PATTERN_HOLD_BACK = 64;
/** The most secret values one redactor holds (each with its encodings); more are refused with an error. */
export const MAX_SECRET_VALUES = 256;

// Every built-in pattern is linear on hostile text: a match can start only where the lookbehind or literal prefix allows,
// and no quantifier is nested in another.
const BEARER = /\b(Bearer\s+)[A-Za-z0-9\-._~+/]{8,}=*/gi;
const JWT = /\beyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g;
const API_KEYS = [
  /\bsk-[A-Za-z0-9_-]{16,}/g, // OpenAI sk-…, sk-proj-…, Anthropic sk-ant-…
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, // AWS access key ids
  /\bgh[pousr]_[A-Za-z0-9]{30,}/g, // GitHub tokens
  /\bxox[abposr]-[A-Za-z0-9-]{10,}/g, // Slack tokens
];
const SECRET_NAME = String.raw`api[_-]?key|apikey|api[_-]?secret|client[_-]?secret|secret[_-]?key|access[_-]?token|auth[_-]?token|password|passwd|pwd`;
const KEY_VALUE = new RegExp(String.raw`\b((?:${SECRET_NAME})["']?\s*[:=]\s*["']?)([^\s"'&,;}]{3,})`, 'gi');
/** Object keys whose string or number values (also in arrays and objects under them) are secrets, whatever they look like. */
const SECRET_KEY = new RegExp(
  String.raw`^(?:x[_-])?(?:${SECRET_NAME}|secret|token|refresh[_-]?token|authorization|proxy[_-]?authorization|private[_-]?key)$`,
  'i',
);
// A card: a whole group of 13-19 digits (single spaces or dashes between them), starting 2-6 (the payment-card ranges:
// this keeps epoch-millisecond timestamps out), that passes the Luhn check. A card glued to a label stays a card
// ('CC-4111…', 'card4111…'); only the digits inside an id token (a UUID, or 24 or more hex characters: a trace id, a
// digest) are kept, since one UUID in about 500 holds 13-19 digits in a row that pass.
const CARD = /(?<!\d)(?<!\d[ -])[2-6](?:[ -]?\d){12,18}(?![ -]?\d)/g;
const ID_TOKEN = /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{24,})$/i;
const TOKEN_CHAR = /[A-Za-z0-9-]/;

/** Whether text[from, to) lies in a token (letters, digits, hyphens) that is a UUID or a long hex id. */
function insideIdToken(input: string, from: number, to: number): boolean {
  while (from > 0 && TOKEN_CHAR.test(input[from - 1])) from--;
  while (to < input.length && TOKEN_CHAR.test(input[to])) to++;
  return ID_TOKEN.test(input.slice(from, to));
}
const CARD_NUMBER = /^[2-6]\d{12,18}$/;
const EMAIL = /(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})*\.[A-Za-z]{2,24}\b/g;

/** The Luhn checksum of a string of digits. */
export function passesLuhn(digits: string): boolean {
  let sum = 0;
  for (let i = digits.length - 1, double = false; i >= 0; i--, double = !double) {
    let d = digits.charCodeAt(i) - 48;
    if (double) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0;
}

/**
 * Masks secrets and personal data in values on their way to the model, the audit, the logs and HTTP (SkillDispatcher
 * calls it on every tool call), and the fields a JSON Schema marks `"x-sensitive": true`. It never changes its input:
 * what it masks comes back as a copy. Options are checked when it is built (at boot): a bad one throws
 * InvalidRedactionOptionsException naming the field.
 */
export class Redactor {
  readonly replacement: string;
  private readonly rules: TextRule[] = [];
  private readonly secretKeys: boolean;
  private readonly cards: boolean;
  private readonly counts = { sensitiveFields: 0, secrets: 0, tokens: 0, cards: 0, emails: 0, patterns: 0, tooDeep: 0 };
  /** Registered secret values (addSecrets), and the forms they are searched for in (exact, URL-encoded, base64, base64url). */
  private readonly secretValues = new Set<string>();
  private secretForms: RegExp | undefined;

  constructor(raw: RedactionOptions | null | undefined = {}) {
    if (raw !== undefined && (raw === null || typeof raw !== 'object' || Array.isArray(raw)))
      throw new InvalidRedactionOptionsException(`redaction must be an object (got ${describe(raw)})`);
    const options = Object.assign(new RedactionOptions(), ownOptions(raw));
    for (const flag of ['secrets', 'cards', 'emails'] as const)
      if (typeof options[flag] !== 'boolean')
        throw new InvalidRedactionOptionsException(`redaction.${flag} must be true or false (got ${describe(options[flag])})`);
    const replacement = options.replacement;
    if (typeof replacement !== 'string' || replacement === '' || replacement.length > MAX_REPLACEMENT_LENGTH)
      throw new InvalidRedactionOptionsException(
        `redaction.replacement must be a non-empty string of at most ${MAX_REPLACEMENT_LENGTH} characters (got ${describe(replacement)})`,
      );
    this.replacement = replacement;
    if (!Array.isArray(options.patterns))
      throw new InvalidRedactionOptionsException(
        `redaction.patterns must be an array of RegExp or strings (got ${describe(options.patterns)})`,
      );
    const own = options.patterns.map((p, i) => compilePattern(p, `redaction.patterns[${i}]`));

    const mask = () => replacement;
    if (options.secrets) {
      this.rules.push({ kind: 'tokens', re: JWT, replace: mask });
      this.rules.push({ kind: 'tokens', re: BEARER, replace: (_, [prefix]) => `${prefix}${replacement}` });
      for (const re of API_KEYS) this.rules.push({ kind: 'secrets', re, replace: mask });
      this.rules.push({
        kind: 'secrets',
        re: KEY_VALUE,
        replace: (_, [prefix, value]) => (value.startsWith(replacement) ? null : `${prefix}${replacement}`),
      });
    }
    if (options.cards)
      this.rules.push({
        kind: 'cards',
        re: CARD,
        replace: (m, _, { offset, input }) =>
          passesLuhn(m.replace(/[ -]/g, '')) && !insideIdToken(input, offset, offset + m.length) ? replacement : null,
      });
    if (options.emails) this.rules.push({ kind: 'emails', re: EMAIL, replace: mask });
    for (const re of own) this.rules.push({ kind: 'patterns', re, replace: mask });
    this.secretKeys = options.secrets === true;
    this.cards = options.cards === true;
  }

  /**
   * Registers values that are secrets wherever they appear, whatever they look like (a model provider's API key: the
   * agent module registers the keys of its agents' providers). From then on every text this redactor sees has each of
   * them masked: as it is (also inside `Bearer <key>`), URL-encoded, and in base64 and base64url. A value of fewer than
   * MIN_SECRET_VALUE_LENGTH characters is not registered (it would mask ordinary words), nor one that is not a string.
   * Returns how many values were new. Values stay registered for the life of the redactor.
   */
  addSecrets(values: Iterable<unknown>): number {
    const fresh = new Set<string>();
    for (const value of values)
      if (typeof value === 'string' && value.length >= MIN_SECRET_VALUE_LENGTH && value.length <= MAX_SECRET_VALUE_LENGTH)
        if (!this.secretValues.has(value)) fresh.add(value);
    // All or none: a call that would pass the bound registers nothing.
    if (this.secretValues.size + fresh.size > MAX_SECRET_VALUES)
      throw new InvalidRedactionOptionsException(`a redactor holds at most ${MAX_SECRET_VALUES} secret values (addSecrets)`);
    for (const value of fresh) this.secretValues.add(value);
    if (fresh.size > 0) this.secretForms = secretFormsPattern(this.secretValues);
    return fresh.size;
  }

  /**
   * `text` with every registered secret value, secret, token, card number, address (when on) and own pattern replaced.
   * `count: false` leaves the metrics as they are (a stream that redacts a text again as it grows counts it once).
   */
  redactText(text: string, options?: { readonly count?: boolean }): string {
    const counts = options?.count === false ? { ...this.counts } : this.counts;
    let out = text;
    // Registered values first: a key that also looks like a token is masked whole, not in part by a pattern.
    if (this.secretForms)
      out = out.replace(this.secretForms, () => {
        counts.secrets++;
        return this.replacement;
      });
    for (const rule of this.rules) {
      rule.re.lastIndex = 0;
      out = out.replace(rule.re, (match: string, ...rest: unknown[]) => {
        const groups = rest.filter((g): g is string => typeof g === 'string' || g === undefined).map((g) => g ?? '');
        const at = rest.findIndex((g) => typeof g === 'number');
        const replaced = rule.replace(match, groups, { offset: rest[at] as number, input: rest[at + 1] as string });
        if (replaced === null) return match;
        counts[rule.kind]++;
        return replaced;
      });
    }
    return out;
  }

  /**
   * How many characters a stream of text must hold back at its end, beyond its last word, so that no match that spans
   * whitespace is shown in part: STREAM_PATTERN_HOLD_BACK when the application has patterns of its own (any of them
   * may), and the longest registered value that holds whitespace. The built-in kinds need none: a key, a token, a JWT
   * and an address hold no whitespace (a stream holds its last word until whitespace follows it), a `password: …` or
   * `Bearer …` pair masks only its value (a word, redacted with the words before it), and a card number written in
   * groups is held by the stream as a run of digits.
   */
  get streamHoldBack(): number {
    let chars = this.rules.some((r) => r.kind === 'patterns') ? STREAM_PATTERN_HOLD_BACK : 0;
    for (const value of this.secretValues) if (/\s/.test(value)) chars = Math.max(chars, value.length);
    return chars;
  }

  /**
   * A copy of a JSON value with its strings redacted (redactText), the values of secret-named keys (password, token,
   * api_key, x-api-key…) masked when secrets are on (every string and number under them, in arrays and objects too), and
   * integers that are card numbers masked. Keys are redacted like strings; two keys that mask alike are both kept
   * (`[redacted]`, `[redacted] (2)`).
   */
  redact(value: unknown): unknown {
    return this.walk(value, 0);
  }

  /**
   * A copy of `value` with every field that `schema` marks `"x-sensitive": true` masked: through `properties`,
   * `additionalProperties`, `items` (one schema or a tuple), `prefixItems`, and each branch of `allOf`/`anyOf`/`oneOf`
   * (a field marked in any branch is masked). `$ref` is not followed.
   */
  maskSensitive(value: unknown, schema: unknown, options?: { readonly count?: boolean }): unknown {
    return this.mask(value, schema, 0, options?.count !== false);
  }

  metrics(): RedactionMetrics {
    const c = this.counts;
    return { total: c.sensitiveFields + c.secrets + c.tokens + c.cards + c.emails + c.patterns + c.tooDeep, ...c };
  }

  private walk(value: unknown, depth: number, secret = false): unknown {
    if (secret && (typeof value === 'string' || typeof value === 'number') && value !== '' && value !== this.replacement) {
      this.counts.secrets++;
      return this.replacement;
    }
    if (typeof value === 'string') return this.redactText(value);
    if (typeof value === 'number') {
      if (this.cards && Number.isSafeInteger(value) && CARD_NUMBER.test(String(value)) && passesLuhn(String(value))) {
        this.counts.cards++;
        return this.replacement;
      }
      return value;
    }
    if (value === null || typeof value !== 'object' || isOpaque(value)) return value;
    if (depth >= MAX_REDACTION_DEPTH) {
      this.counts.tooDeep++;
      return this.replacement;
    }
    if (Array.isArray(value)) return value.map((v) => this.walk(v, depth + 1, secret));
    // An object that says how it is serialized (a decimal type, an entity with toJSON) is redacted as what it shows.
    const toJSON: unknown = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') return this.walk(toJSON.call(value), depth + 1, secret);
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) {
      // A key can hold a secret too (a result keyed by API key, card or address): shown redacted, never merged with another.
      const base = this.redactText(key);
      let shown = base;
      for (let n = 2; shown !== key && Object.hasOwn(out, shown); n++) shown = `${base} (${n})`;
      define(out, shown, this.walk(v, depth + 1, secret || (this.secretKeys && SECRET_KEY.test(key))));
    }
    return out;
  }

  private mask(value: unknown, schema: unknown, depth: number, count: boolean): unknown {
    if (schema === null || typeof schema !== 'object' || value === undefined) return value;
    const s = schema as Record<string, unknown>;
    if (s['x-sensitive'] === true) {
      if (count) this.counts.sensitiveFields++;
      return this.replacement;
    }
    if (depth >= MAX_REDACTION_DEPTH || value === null || typeof value !== 'object') return value;
    let out: unknown = value;
    if (Array.isArray(value)) {
      const tuple = Array.isArray(s.prefixItems) ? s.prefixItems : Array.isArray(s.items) ? s.items : null;
      const rest = Array.isArray(s.items) ? s.additionalItems : s.items;
      out = value.map((v, i) => this.mask(v, tuple && i < tuple.length ? tuple[i] : rest, depth + 1, count));
    } else {
      const properties = isObject(s.properties) ? s.properties : {};
      const copy: Record<string, unknown> = {};
      for (const [key, v] of Object.entries(value))
        define(copy, key, this.mask(v, Object.hasOwn(properties, key) ? properties[key] : s.additionalProperties, depth + 1, count));
      out = copy;
    }
    for (const branch of ['allOf', 'anyOf', 'oneOf'] as const)
      if (Array.isArray(s[branch])) for (const sub of s[branch]) out = this.mask(out, sub, depth + 1, count);
    return out;
  }
}

/**
 * One pattern for every registered value in each form it may be written in: as it is, URL-encoded
 * (`encodeURIComponent`), base64 and base64url (padding optional). Longest first, so that a value that contains another
 * is masked whole. Literals only: linear on any text.
 */
function secretFormsPattern(values: ReadonlySet<string>): RegExp {
  const forms = new Set<string>();
  for (const value of values) {
    forms.add(value);
    try {
      forms.add(encodeURIComponent(value));
    } catch {
      // a lone surrogate has no URL-encoded form
    }
    const base64 = Buffer.from(value, 'utf8').toString('base64');
    forms.add(base64);
    forms.add(base64.replace(/=+$/, ''));
    forms.add(Buffer.from(value, 'utf8').toString('base64url'));
  }
  const sorted = [...forms].sort((a, b) => b.length - a.length);
  return new RegExp(sorted.map((f) => f.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&')).join('|'), 'g');
}

function compilePattern(pattern: unknown, field: string): RegExp {
  let re: RegExp;
  if (pattern instanceof RegExp) re = new RegExp(pattern.source, [...new Set(`${pattern.flags.replace('y', '')}g`)].join(''));
  else if (typeof pattern === 'string' && pattern !== '') {
    try {
      re = new RegExp(pattern, 'g');
    } catch (err) {
      throw new InvalidRedactionOptionsException(`${field} is not a valid regular expression: ${(err as Error).message}`);
    }
  } else throw new InvalidRedactionOptionsException(`${field} must be a RegExp or a non-empty string (got ${describe(pattern)})`);
  if (new RegExp(re.source, re.flags.replace('g', '')).test(''))
    throw new InvalidRedactionOptionsException(`${field} (${String(re)}) matches the empty string; make it match at least one character`);
  return re;
}

/** Sets an own property, `__proto__` included, without touching the prototype. */
function define(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * Values kept as they are rather than walked: dates (a database row's timestamps stay Date objects for the code that
 * called the skill; the model sees their ISO text), binary buffers and typed arrays. Nothing in them is text to redact.
 */
function isOpaque(value: object): boolean {
  // By tag, not instanceof: a driver may build its dates in another realm (PGlite's WASM loader under jest does).
  const tag = Object.prototype.toString.call(value);
  return tag === '[object Date]' || tag === '[object ArrayBuffer]' || ArrayBuffer.isView(value);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (Array.isArray(value)) return 'an array';
  return value === null ? 'null' : typeof value === 'object' ? 'an object' : String(value);
}
