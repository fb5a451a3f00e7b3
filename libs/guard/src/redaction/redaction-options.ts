/**
 * What the redactor masks in every tool call's arguments and result (SkillDispatcher), before the model sees the result
 * and before anything is audited, logged or returned. Fields a skill's parameter schema marks `"x-sensitive": true` are
 * always masked, whatever these options say.
 */
export class RedactionOptions {
  /** API keys (`sk-…`, `sk-ant-…`, AWS `AKIA…`/`ASIA…`, GitHub `ghp_…`, Slack `xox…-`), `api_key=…`-style pairs, values under secret-named keys (password, token, api_key…), bearer tokens and JWTs. Default true. */
  secrets?: boolean = true;
  /** Card numbers: 13 to 19 digits, spaces or dashes allowed, that pass the Luhn check. Default true. */
  cards?: boolean = true;
  /**
   * E-mail addresses. Default false: an address in a tool result is often the very data the model works with (a
   * customer to write to); an application that must keep addresses from the model and the audit turns this on.
   */
  emails?: boolean = false;
  /** Patterns of your own (RegExp, or a string compiled as one), each match replaced. Run on untrusted text: keep them linear (no nested quantifiers). */
  patterns?: ReadonlyArray<RegExp | string> = [];
  /** What a masked value or match becomes. Default '[redacted]'. */
  replacement?: string = '[redacted]';
}

/** Counters of the redactor, since boot. */
export interface RedactionMetrics {
  /** Every masked value or match. */
  readonly total: number;
  /** Fields marked `"x-sensitive": true` in a skill's parameters. */
  readonly sensitiveFields: number;
  /** API keys, secret-named keys' values, `key=value` secrets. */
  readonly secrets: number;
  /** Bearer tokens and JWTs. */
  readonly tokens: number;
  readonly cards: number;
  readonly emails: number;
  /** Matches of your own patterns. */
  readonly patterns: number;
  /** Subtrees nested deeper than the redactor walks, masked whole (fail closed). */
  readonly tooDeep: number;
}
