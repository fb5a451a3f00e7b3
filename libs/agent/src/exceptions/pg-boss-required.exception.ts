/**
 * A boot error of cluster mode (`queue: { driver: 'pg-boss' }`): pg-boss, an optional peer dependency of @zmodu/agent,
 * is not installed (`found` null), is another version than `range` (`found` its version), or cannot be loaded by this
 * Node. The message says what to install or run.
 */
export class PgBossRequiredException extends Error {
  constructor(
    message: string,
    readonly range: string,
    readonly found: string | null,
  ) {
    super(message);
    this.name = 'PgBossRequiredException';
  }
}
