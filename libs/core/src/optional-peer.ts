import { OptionalPeerUnavailableException } from './exceptions/optional-peer-unavailable.exception';

/**
 * Optional peer dependencies: packages that only some features need (the `openai` SDK for the OpenAI provider,
 * `prom-client` for the metrics...), declared in `peerDependencies` with `peerDependenciesMeta: { optional: true }`,
 * which an application installs only when it uses the feature. The feature loads its package when it is configured
 * (a provider's constructor, a module's provider factory): at boot, never at the first call, and never at import.
 *
 * `load` is the caller's own `() => require('<package>')`: a literal require in the package that declares the peer,
 * so that the package resolves from there (nested and pnpm layouts) and bundlers see it.
 */
export interface OptionalPeerOptions {
  /** What the error tells to give `npm install`, e.g. 'openai@^7'. Default: the package name. */
  readonly install?: string;
}

/**
 * How an optional peer is loaded: `load()` by default. Tests replace it to simulate a package that is not installed
 * (`simulateMissingPeers` of `@zmodu/guard/testing`), without uninstalling anything.
 */
export type OptionalPeerResolver = (packageName: string, load: () => unknown) => unknown;

const loadIt: OptionalPeerResolver = (_packageName, load) => load();
let resolver: OptionalPeerResolver = loadIt;

/**
 * The optional peer `packageName`, which `feature` (e.g. 'the OpenAI provider') needs. Not installed: an
 * `OptionalPeerUnavailableException` saying "<feature> needs the <package> package: npm install <install>".
 * Installed but failing to load (a dependency of its own missing, a broken install): the same exception, quoting the
 * failure. Call it where the feature is configured, so that the error comes at boot.
 */
export function loadOptionalPeer<T>(packageName: string, feature: string, load: () => T, options: OptionalPeerOptions = {}): T {
  const install = options.install ?? packageName;
  try {
    return resolver(packageName, load) as T;
  } catch (err) {
    if (isNotInstalled(err, packageName)) throw new OptionalPeerUnavailableException(packageName, feature, install, true);
    throw new OptionalPeerUnavailableException(packageName, feature, install, false, firstLine(err));
  }
}

/**
 * The optional peer `packageName` when it is installed, `undefined` when it is not: for a feature that works
 * without it (e.g. @nestjs/swagger's decorators, no-ops without it). Installed but failing to load still throws.
 */
export function tryLoadOptionalPeer<T>(
  packageName: string,
  feature: string,
  load: () => T,
  options: OptionalPeerOptions = {},
): T | undefined {
  try {
    return loadOptionalPeer(packageName, feature, load, options);
  } catch (err) {
    if (err instanceof OptionalPeerUnavailableException && err.missing) return undefined;
    throw err;
  }
}

/** Replace how optional peers are loaded; returns the function that puts the previous way back. For tests. */
export function setOptionalPeerResolver(next: OptionalPeerResolver): () => void {
  const previous = resolver;
  resolver = next;
  return () => {
    resolver = previous;
  };
}

/**
 * A require (Node's, or Jest's) of the package itself that found nothing: `MODULE_NOT_FOUND` (or ESM's
 * `ERR_MODULE_NOT_FOUND`) naming the package or a path inside it. A module missing inside an installed package
 * names another module: that is a broken install, not an absent package.
 */
function isNotInstalled(err: unknown, packageName: string): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (code !== 'MODULE_NOT_FOUND' && code !== 'ERR_MODULE_NOT_FOUND') return false;
  const message = firstLine(err);
  return [`'${packageName}'`, `'${packageName}/`, `"${packageName}"`, `"${packageName}/`].some((quoted) => message.includes(quoted));
}

function firstLine(err: unknown): string {
  // An Error of another realm (a package loaded by Jest's module registry) is no `instanceof Error`: read its message.
  const message = (err as { message?: unknown } | null)?.message;
  const text = typeof message === 'string' ? message : String(err);
  return (text.split('\n')[0] ?? '').slice(0, 300);
}
