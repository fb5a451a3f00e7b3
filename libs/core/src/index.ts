// @zmodu/core: internal. What the @zmodu packages share and an application must not depend on (ESLint admits this
// package only from libs/, apps/cli and the repository's tests), and ZmoduError, which every package re-exports.
export { ZmoduError } from './zmodu-error';
export { canonicalJson } from './canonical-json';
export { ownOptions, ownValue } from './own-value';
export { isScopeId, MAX_SCOPE_ID_LENGTH, scopeIdProblem } from './scope-id';
export { isRowRefused, sqlState } from './row-refused';
export { queryRows, returning } from './rows';
export { isDatabaseUnavailable } from './database-unavailable';
export { loadOptionalPeer, setOptionalPeerResolver, tryLoadOptionalPeer } from './optional-peer';
export type { OptionalPeerOptions, OptionalPeerResolver } from './optional-peer';
export { simulateMissingPeers } from './simulate-missing-peers';
export { OptionalPeerUnavailableException } from './exceptions/optional-peer-unavailable.exception';
export { checkStoreChoice, resolveStoreChoice } from './store-choice';
export type { StoreChoice, StoreChoiceSpec } from './store-choice';
export { DataSourceMissingException } from './exceptions/data-source-missing.exception';
export { registerMigrations, zmoduMigrations } from './migrations';
export type { ZmoduMigration, ZmoduMigrationInput } from './migrations';
