import {
  INHERITED_PERMISSION_KEY_PROBLEM,
  INVALID_PERMISSION_CODE_PROBLEM,
  PERMISSIONS_NOT_OBJECT_PROBLEM,
  UNKNOWN_PERMISSION_KEY_PROBLEM,
} from './skill.messages';

/** The permission code each of a module's skills requires, by key; a key left out requires none (the default). */
export type SkillPermissions<K extends string> = { readonly [P in K]?: string };

/** The longest permission code a module option takes. */
export const MAX_PERMISSION_CODE_LENGTH = 200;

// eslint-disable-next-line no-control-regex -- control characters are what it finds
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const PLAIN_KEY = /^[A-Za-z_$][\w$]*$/;

const describe = (value: unknown): string => (typeof value === 'string' ? JSON.stringify(value) : value === null ? 'null' : typeof value);

/** Why `code` cannot be a permission code, or null when it can. */
export function permissionCodeProblem(code: unknown): string | null {
  const ok =
    typeof code === 'string' && code !== '' && code === code.trim() && code.length <= MAX_PERMISSION_CODE_LENGTH && !CONTROL.test(code);
  return ok ? null : INVALID_PERMISSION_CODE_PROBLEM(describe(code), MAX_PERMISSION_CODE_LENGTH);
}

/**
 * A module's `permissions` option checked once, at boot: an object whose own keys are among `keys`, each a permission
 * code (or undefined: none). Inherited keys are never read (one of `keys` found only on the prototype fails); an unknown key (`__proto__`, `constructor`, a typo) or a
 * bad code calls `fail` with the field (`jobs.permissions.schedule_job`) and the problem. Returns a frozen
 * prototype-less record of the codes given; nothing given gives `{}`.
 */
export function resolveSkillPermissions<K extends string>(
  raw: unknown,
  keys: readonly K[],
  field: string,
  fail: (field: string, problem: string) => never,
): SkillPermissions<K> {
  const out = Object.create(null) as Record<string, string>;
  if (raw === undefined || raw === null) return Object.freeze(out) as SkillPermissions<K>;
  if (typeof raw !== 'object' || Array.isArray(raw)) fail(field, PERMISSIONS_NOT_OBJECT_PROBLEM(`{ ${keys[0]}: '…' }`));
  const known = new Set<string>(keys);
  // A code the app meant to require but put on a prototype (a class getter, Object.create(defaults)) must not be
  // dropped silently: that would open the skill to every caller.
  for (const key of keys)
    if (key in (raw as object) && !Object.hasOwn(raw as object, key)) fail(`${field}.${key}`, INHERITED_PERMISSION_KEY_PROBLEM);
  for (const key of Reflect.ownKeys(raw as object)) {
    const name = typeof key === 'string' ? key : String(key);
    const keyField = PLAIN_KEY.test(name) ? `${field}.${name}` : `${field}[${JSON.stringify(name)}]`;
    if (typeof key !== 'string' || !known.has(key)) fail(keyField, UNKNOWN_PERMISSION_KEY_PROBLEM(keys));
    const code = (raw as Record<string, unknown>)[key as string];
    if (code === undefined) continue;
    const problem = permissionCodeProblem(code);
    if (problem) fail(keyField, problem);
    out[key as string] = code as string;
  }
  return Object.freeze(out) as SkillPermissions<K>;
}
