import { OPTIONAL_PEER_BROKEN_MESSAGE, OPTIONAL_PEER_MISSING_MESSAGE } from '../core.messages';
import { ZmoduError } from '../zmodu-error';

/**
 * A feature that was configured needs an optional peer dependency that is not installed (`missing`) or cannot be
 * loaded (installed but broken). Thrown at boot, where the feature is configured (see `loadOptionalPeer`).
 */
export class OptionalPeerUnavailableException extends ZmoduError {
  constructor(
    /** The npm package the feature needs, e.g. 'openai'. */
    readonly packageName: string,
    /** What needs it, e.g. 'the OpenAI provider'. */
    readonly feature: string,
    /** What to give `npm install`, e.g. 'openai@^7'. */
    readonly install: string,
    /** true: not installed; false: installed, but loading it failed (`detail` says how). */
    readonly missing: boolean,
    detail = '',
  ) {
    super(
      missing
        ? OPTIONAL_PEER_MISSING_MESSAGE(feature, packageName, install)
        : OPTIONAL_PEER_BROKEN_MESSAGE(feature, packageName, install, detail),
    );
    this.name = 'OptionalPeerUnavailableException';
  }
}
