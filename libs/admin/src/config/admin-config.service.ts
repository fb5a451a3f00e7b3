import { Inject, Injectable } from '@nestjs/common';
import { ADMIN_SKILLS_OPTIONS, InjectAdminConfigStore } from '../skills/admin-skills.constants';
import type { ResolvedAdminSkillsOptions } from '../skills/admin-skills.options';
import type { AdminConfigStore } from './admin-config.store';
import type { ConfigEntry, ConfigKeyView } from './admin-config.types';
import { checkTenant } from './config-write';
import type { DeclaredConfigKey } from './config-keys';
import { ConfigKeyImmutableException } from './exceptions/config-key-immutable.exception';
import { ConfigKeyUndeclaredException } from './exceptions/config-key-undeclared.exception';
import { InvalidConfigValueException } from './exceptions/invalid-config-value.exception';

/** What a config write answers (and what the audit entry of admin.config.set records). */
export interface ConfigSetResult {
  readonly key: string;
  readonly value: unknown;
  readonly version: number;
  /** The tenant's value before the write, and its version; null when it had none stored (the default applied). */
  readonly previous: { readonly value: unknown; readonly version: number } | null;
  readonly updatedAt: string;
  readonly updatedBy: string | null;
}

/**
 * The declared config keys of AdminSkillsModule, per tenant: reads with the declared defaults, and the checked write
 * (declared, mutable, typed, versioned) behind admin.config.set. Every write an agent or an admin makes goes through
 * the admin.config.set skill (SkillDispatcher.dispatch: guard, permission, audit); call `set` directly only from
 * code that audits its own writes.
 */
@Injectable()
export class AdminConfig {
  constructor(
    @Inject(ADMIN_SKILLS_OPTIONS) private readonly options: ResolvedAdminSkillsOptions,
    @InjectAdminConfigStore() private readonly store: AdminConfigStore,
  ) {}

  /** The declared key names, sorted. */
  keys(): string[] {
    return [...this.options.configKeys.keys()].sort();
  }

  /** The tenant's view of one declared key; ConfigKeyUndeclaredException for any other. */
  async get(tenantId: string, key: string): Promise<ConfigKeyView> {
    const declared = this.declared(key);
    return view(declared, await this.store.get(checkTenant(tenantId), declared.key));
  }

  /** The tenant's view of every declared key, sorted by key. */
  async list(tenantId: string): Promise<ConfigKeyView[]> {
    const keys = this.keys();
    const stored = new Map((await this.store.list(checkTenant(tenantId), keys)).map((e) => [e.key, e]));
    return keys.map((key) => view(this.options.configKeys.get(key) as DeclaredConfigKey, stored.get(key)));
  }

  /**
   * Write a declared, mutable key of the tenant, after checking the value against its type, in one transaction with
   * its version (see AdminConfigStore.set: `expectedVersion` binds the write to the version the writer read).
   */
  async set(tenantId: string, key: string, value: unknown, write: { expectedVersion?: number; updatedBy?: string | null } = {}) {
    const declared = this.declared(key);
    if (!declared.mutable) throw new ConfigKeyImmutableException(declared.key);
    const problems = declared.check(value);
    if (problems.length) throw new InvalidConfigValueException(declared.key, problems);
    const { previous, entry } = await this.store.set(checkTenant(tenantId), declared.key, value, write);
    const result: ConfigSetResult = {
      key: entry.key,
      value: entry.value,
      version: entry.version,
      previous: previous ? { value: previous.value, version: previous.version } : null,
      updatedAt: entry.updatedAt.toISOString(),
      updatedBy: entry.updatedBy,
    };
    return result;
  }

  private declared(key: string): DeclaredConfigKey {
    const declared = typeof key === 'string' ? this.options.configKeys.get(key) : undefined;
    if (!declared) throw new ConfigKeyUndeclaredException(String(key));
    return declared;
  }
}

function view(declared: DeclaredConfigKey, entry: ConfigEntry | undefined): ConfigKeyView {
  return {
    key: declared.key,
    value: entry ? entry.value : declared.default,
    version: entry?.version ?? 0,
    source: entry ? 'stored' : 'default',
    mutable: declared.mutable,
    type: declared.type,
    description: declared.description,
    updatedAt: entry ? entry.updatedAt.toISOString() : null,
    updatedBy: entry?.updatedBy ?? null,
  };
}
