// @zmodu/db/internal: what the other @zmodu packages (and this repository's tests) need from @zmodu/db and an
// application must not use. ESLint admits it only from libs/, apps/cli, test/ and bench/; it is not covered by semantic versioning.
export { runReadOnlyStatement } from './read-only';
export { SlotsTakenError, TAKE_SLOT_SQL } from './statement-bounds';
export type { StatementSlot } from './statement-bounds';
