import { existsSync, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { createRequire } from 'node:module';
import { InvalidConsoleOptionsException } from '../exceptions/invalid-console-options.exception';

/** Options of the approvals console (`AdminModule.forRoot({ console: true, consoleOptions: { ... } })`). */
export interface AdminConsoleOptions {
  /** The page's title. Default 'Approvals'. */
  readonly title?: string;
  /**
   * Your application's login page, shown as "Sign in with the application" (a path of this origin, or an http(s) URL).
   * After its login it hands the token over: `sessionStorage.setItem('zmodu.console.token', token)`, then a redirect to
   * the console (same origin). Default: none (the token is pasted).
   */
  readonly loginUrl?: string | null;
  /** How often the pending queue is read again, in ms (1,000 to 600,000). Default 5,000. */
  readonly pollIntervalMs?: number;
  /** The folder of the built console (its index.html). Default: `console-dist` of the @zmodu/admin package. */
  readonly root?: string;
}

/** The console options with their defaults. */
export interface ResolvedConsoleOptions {
  readonly title: string;
  readonly loginUrl: string | null;
  readonly pollIntervalMs: number;
  readonly root: string | null;
}

/** The name under which the app's login page hands the token to the console (sessionStorage, same origin). */
export const CONSOLE_TOKEN_HANDOFF_KEY = 'zmodu.console.token';

const has = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k);

/** Whether the text holds a control character (below U+0020). */
const hasControl = (text: string) => [...text].some((c) => c.charCodeAt(0) < 0x20);

/** Check the console options (a boot error names the field) and fill in the defaults. */
export function resolveConsoleOptions(raw: AdminConsoleOptions | undefined, candidates = consoleBuild.roots()): ResolvedConsoleOptions {
  const o = (raw ?? {}) as Record<string, unknown>;
  if (typeof o !== 'object' || o === null || Array.isArray(o))
    throw new InvalidConsoleOptionsException('consoleOptions', 'must be an object');
  for (const key of Object.keys(o))
    if (!['title', 'loginUrl', 'pollIntervalMs', 'root'].includes(key))
      throw new InvalidConsoleOptionsException(key, 'is not a console option (title, loginUrl, pollIntervalMs, root)');
  const title = has(o, 'title') && o.title !== undefined ? o.title : 'Approvals';
  if (typeof title !== 'string' || title.trim() === '' || title.length > 100 || hasControl(title))
    throw new InvalidConsoleOptionsException('title', 'must be text of 1 to 100 characters without control characters');
  const loginUrl = has(o, 'loginUrl') && o.loginUrl !== undefined ? o.loginUrl : null;
  if (loginUrl !== null && (typeof loginUrl !== 'string' || !isLoginUrl(loginUrl)))
    throw new InvalidConsoleOptionsException('loginUrl', 'must be a path of this origin (/login) or an http(s) URL');
  const poll = has(o, 'pollIntervalMs') && o.pollIntervalMs !== undefined ? o.pollIntervalMs : 5000;
  if (typeof poll !== 'number' || !Number.isInteger(poll) || poll < 1000 || poll > 600_000)
    throw new InvalidConsoleOptionsException('pollIntervalMs', 'must be a whole number of milliseconds from 1000 to 600000');
  let root: string | null = null;
  if (has(o, 'root') && o.root !== undefined) {
    if (typeof o.root !== 'string' || !isAbsolute(o.root) || !isBuilt(o.root))
      throw new InvalidConsoleOptionsException('root', 'must be the absolute path of a folder holding the built console (index.html)');
    root = o.root;
  } else root = candidates.find(isBuilt) ?? null;
  return { title: title.trim(), loginUrl, pollIntervalMs: poll, root };
}

function isLoginUrl(url: string): boolean {
  if (url.length > 2000 || hasControl(url) || url.includes(' ') || url.includes('\u007f')) return false;
  if (url.startsWith('/')) return !url.startsWith('//') && !url.startsWith('/\\');
  try {
    const u = new URL(url);
    return u.protocol === 'https:' || u.protocol === 'http:';
  } catch {
    return false;
  }
}

function isBuilt(dir: string): boolean {
  try {
    return statSync(dir).isDirectory() && existsSync(join(dir, 'index.html'));
  } catch {
    return false;
  }
}

/** Internal: where the built console is looked for (an object, so that a test can point it elsewhere). */
export const consoleBuild = { roots: defaultConsoleRoots };

/**
 * Where the built console may be: beside this file's package (`<package>/console-dist`: the published package, and the
 * sources in the repository), or the @zmodu/admin package the application resolves (a bundled application).
 */
function defaultConsoleRoots(): string[] {
  const roots = [join(__dirname, '..', '..', 'console-dist'), join(__dirname, '..', '..', '..', 'console-dist')];
  try {
    const pkg = createRequire(join(process.cwd(), 'noop.js')).resolve('@zmodu/admin/package.json');
    roots.push(join(pkg, '..', 'console-dist'));
  } catch {
    // not resolvable from the working directory: the roots above
  }
  return roots;
}
