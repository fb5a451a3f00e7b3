export const INVALID_SKILL_MESSAGE = (name: unknown, problem: string) =>
  `Invalid @Skill${typeof name === 'string' && name ? ` '${name}'` : ''}: ${problem}.`;

export const DUPLICATE_SKILL_MESSAGE = (name: string, first: string, second: string) =>
  `Duplicate skill name '${name}': declared by ${first} and by ${second}. Skill names must be unique; rename one of them.`;

export const UNKNOWN_SKILL_REMOVE_MESSAGE = (name: string) => `Cannot remove skill '${name}': no such skill is registered.`;

export const REQUEST_SCOPED_SKILL_PROBLEM = (owner: string) =>
  `skills must live on singleton providers; ${owner} is request-scoped. Read request data from the SkillInvocation context instead`;

export const MISSING_GUARD_MESSAGE =
  'SkillDispatcher.dispatch needs a SkillContext with a guard: build it with createSkillContext({ guard: new Guard({ allow: [...], allowExecute: false }), ... }).';

export const INVALID_CONTEXT_MESSAGE = (what: string) => `Invalid SkillContext: ${what}.`;

export const PERMISSIONS_NOT_OBJECT_PROBLEM = (example: string) =>
  `expected an object such as ${example}, or nothing (no permission required)`;
export const INHERITED_PERMISSION_KEY_PROBLEM =
  'is inherited (a class getter or a prototype), and only own properties are read: it would require no permission. Set it on the object itself';
export const UNKNOWN_PERMISSION_KEY_PROBLEM = (keys: readonly string[]) =>
  `no such skill here: the keys are ${keys.join(', ')} (leave a key out to require no permission)`;
export const INVALID_PERMISSION_CODE_PROBLEM = (got: string, max: number) =>
  `expected a permission code: a non-blank string of at most ${max} characters, without control characters or surrounding spaces, such as 'memory:write' (got ${got})`;

export const PINO_OPTIONS_REDACTOR_MESSAGE =
  "zmoduPinoOptions takes a Redactor (GuardModule's: inject: [Redactor] in LoggerModule.forRootAsync), or nothing for the default rules.";

/** What the model is told when a skill failed because the database could not be reached (a lost connection, a restart). */
export const DATABASE_UNAVAILABLE_TEXT = 'The database could not be reached while this call ran. Try again later.';

/** A schema keyword the validator would not enforce: each message names the keyword, where it is, and what to do. */
export const UNKNOWN_KEYWORD_PROBLEM = (subject: string, keyword: string, path: string) =>
  `${subject} has the keyword ${JSON.stringify(keyword)} at ${path}, which the validator does not know and would ignore: ` +
  'remove it, or spell a JSON Schema (draft-07) keyword such as type, properties, required, enum, pattern, format, minimum or maxLength';
export const UNKNOWN_FORMAT_PROBLEM = (subject: string, format: string, path: string, known: readonly string[]) =>
  `${subject} has format ${JSON.stringify(format)} at ${path}, which the validator cannot check and would ignore: ` +
  `use one of ${known.join(', ')}, or a pattern`;
export const KEYWORD_FOR_OTHER_TYPE_PROBLEM = (
  subject: string,
  keyword: string,
  path: string,
  appliesTo: readonly string[],
  declared: readonly string[],
) =>
  `${subject} has ${keyword} at ${path}, which checks only ${appliesTo.join(' or ')} values while the type there is ` +
  `${declared.join(' or ')}, so it would never be checked: remove it or use a keyword for that type (maxLength for a string, maximum for a number, ...)`;
export const IGNORED_KEYWORD_PROBLEM = (subject: string, keyword: string, path: string, why: string) =>
  `${subject} has ${JSON.stringify(keyword)} at ${path}, which the validator would ignore because ${why}: complete it or remove it`;
export const CONTENT_KEYWORD_PROBLEM = (subject: string, keyword: string, path: string) =>
  `${subject} has ${JSON.stringify(keyword)} at ${path}, which the validator takes for an annotation and never checks ` +
  '(contentEncoding, contentMediaType and contentSchema alike): remove it, and check the content in the handler or with pattern or format';
export const REF_OUTSIDE_SCHEMAS_PROBLEM = (subject: string, path: string, ref: string, segment: string) =>
  `${subject} has "$ref" at ${path} pointing at ${JSON.stringify(ref.slice(0, 200))}, inside ${JSON.stringify(segment.slice(0, 80))}, ` +
  'which holds data, not schemas, so the schema there is never checked for keywords the validator would ignore: ' +
  'move it under definitions and point there';
