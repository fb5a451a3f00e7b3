import type { JsonSchema } from '@zmodu/skills';

/** The type of a declared config key: a JSON type name, or a JSON Schema its values must match. */
export type ConfigValueType = 'number' | 'integer' | 'string' | 'boolean' | JsonSchema;

/** One config key an application allows admins (and admin agents) to read, and perhaps change, per tenant. */
export interface ConfigKeySpec {
  /** What a value must be: 'number', 'integer', 'string', 'boolean', or a JSON Schema. */
  readonly type: ConfigValueType;
  /** Whether `admin.config.set` (and `PUT /admin/config/:key`) may change it. Default false: read-only. */
  readonly mutable?: boolean;
  /** The value of a tenant that never set one (it must match `type`). Default: none (`null`). */
  readonly default?: unknown;
  /** What the key means, for the model and the operator. */
  readonly description?: string;
}

/** The `config` option of AdminSkillsModule: the keys that exist, by name. Any other key is refused. */
export interface AdminConfigOptions {
  readonly keys: Readonly<Record<string, ConfigKeySpec>>;
}

/** A tenant's stored value of one key. `version` counts its writes: 1 after the first. */
export interface ConfigEntry {
  readonly key: string;
  readonly value: unknown;
  readonly version: number;
  readonly updatedAt: Date;
  /** Who wrote it (the caller's user id or agent name), or null. */
  readonly updatedBy: string | null;
}

/** What a write asks for. */
export interface ConfigWrite {
  /**
   * The version the writer read (0: the key has no stored value yet). Given, the write lands only on that version;
   * otherwise ConfigVersionConflictException with the current one. Left out: the write lands on whatever is there.
   */
  readonly expectedVersion?: number;
  /** Who writes (kept as `updatedBy`). */
  readonly updatedBy?: string | null;
}

/** What a write did: the entry before it (undefined when the key had no stored value) and the entry it wrote. */
export interface ConfigWriteResult {
  readonly previous: ConfigEntry | undefined;
  readonly entry: ConfigEntry;
}

/** A declared key as `admin.config.get` and `GET /admin/config` show it to a tenant. */
export interface ConfigKeyView {
  readonly key: string;
  /** The tenant's stored value, else the declared default, else null. */
  readonly value: unknown;
  /** 0 when the tenant never set it: send it as `expectedVersion` to write the first value. */
  readonly version: number;
  readonly source: 'stored' | 'default';
  readonly mutable: boolean;
  readonly type: ConfigValueType;
  readonly description: string | null;
  readonly updatedAt: string | null;
  readonly updatedBy: string | null;
}
