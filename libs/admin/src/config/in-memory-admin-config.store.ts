import type { AdminConfigStore } from './admin-config.store';
import type { ConfigEntry, ConfigWrite, ConfigWriteResult } from './admin-config.types';
import { checkKey, checkTenant, checkWrite } from './config-write';
import { ConfigVersionConflictException } from './exceptions/config-version-conflict.exception';

interface Stored {
  readonly json: string;
  readonly version: number;
  readonly updatedAt: Date;
  readonly updatedBy: string | null;
}

const toEntry = (key: string, s: Stored): ConfigEntry => ({
  key,
  value: JSON.parse(s.json) as unknown,
  version: s.version,
  updatedAt: new Date(s.updatedAt),
  updatedBy: s.updatedBy,
});

/**
 * Config values in process memory (tests, a single process): one Map per tenant, values kept as JSON text (a caller
 * changing an entry it got changes nothing stored); a write is one synchronous step, so it is atomic.
 */
export class InMemoryAdminConfigStore implements AdminConfigStore {
  private readonly tenants = new Map<string, Map<string, Stored>>();

  async get(tenantId: string, key: string): Promise<ConfigEntry | undefined> {
    const k = checkKey(key);
    const stored = this.tenants.get(checkTenant(tenantId))?.get(k);
    return stored && toEntry(k, stored);
  }

  async list(tenantId: string, keys: readonly string[]): Promise<ConfigEntry[]> {
    const entries = this.tenants.get(checkTenant(tenantId));
    const out: ConfigEntry[] = [];
    for (const key of new Set(keys.map(checkKey))) {
      const stored = entries?.get(key);
      if (stored) out.push(toEntry(key, stored));
    }
    return out;
  }

  async set(tenantId: string, key: string, value: unknown, write?: ConfigWrite): Promise<ConfigWriteResult> {
    const w = checkWrite(tenantId, key, value, write);
    let entries = this.tenants.get(w.tenantId);
    const before = entries?.get(w.key);
    const current = before?.version ?? 0;
    if (w.expectedVersion !== undefined && w.expectedVersion !== current)
      throw new ConfigVersionConflictException(w.key, w.expectedVersion, current);
    const stored: Stored = { json: w.json, version: current + 1, updatedAt: new Date(), updatedBy: w.updatedBy };
    if (!entries) this.tenants.set(w.tenantId, (entries = new Map()));
    entries.set(w.key, stored);
    return { previous: before && toEntry(w.key, before), entry: toEntry(w.key, stored) };
  }
}
