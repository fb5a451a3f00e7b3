const BRAND = Symbol.for('zmodu.error');

/**
 * The base of every exception the @zmodu libraries throw (but EmbeddedDatabaseError, which is PostgreSQL's own error
 * as pg's DatabaseError is: its `code` is the SQLSTATE).
 *
 * `code` names the kind of failure and is stable across releases: it is the class's name, which each class sets
 * explicitly (so a bundler's renaming does not change it), unless the class says otherwise (SkillError: the code its
 * thrower chose). It is the `code` of the HTTP answer (@zmodu/http). Match on `code` or `instanceof`, never on the
 * message, which says what to do and may be reworded.
 */
export class ZmoduError extends Error {
  /** The kind of failure, e.g. 'AgentNotFoundException'. */
  declare readonly code: string;

  constructor(message?: string, options?: ErrorOptions) {
    super(message, options);
    Object.defineProperty(this, BRAND, { value: true });
  }

  /**
   * True for an error of any @zmodu library, also when the application holds two copies of the libraries (where
   * `instanceof` of one copy's class fails for the other's errors).
   */
  static isZmoduError(value: unknown): value is ZmoduError {
    return value instanceof Error && (value as unknown as Record<symbol, unknown>)[BRAND] === true;
  }
}

// The default code is the name each class sets; a class that assigns `code` (SkillError) keeps its own.
Object.defineProperty(ZmoduError.prototype, 'code', {
  configurable: true,
  get(this: ZmoduError): string {
    return this.name;
  },
  set(this: ZmoduError, value: string) {
    Object.defineProperty(this, 'code', { value, enumerable: true, configurable: true, writable: false });
  },
});
