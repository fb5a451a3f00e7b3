import { setOptionalPeerResolver } from './optional-peer';

/**
 * Make `loadOptionalPeer` find none of `packageNames`, as if they were not installed (the error a require of an
 * absent package throws, code MODULE_NOT_FOUND), without uninstalling them; other packages load as usual. Returns
 * the function that makes them found again: call it when the test ends.
 */
export function simulateMissingPeers(...packageNames: string[]): () => void {
  const missing = new Set(packageNames);
  return setOptionalPeerResolver((packageName, load) => {
    if (!missing.has(packageName)) return load();
    throw Object.assign(new Error(`Cannot find module '${packageName}'`), { code: 'MODULE_NOT_FOUND' });
  });
}

export { setOptionalPeerResolver } from './optional-peer';
export type { OptionalPeerResolver } from './optional-peer';
