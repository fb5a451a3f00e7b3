import { randomUUID } from 'node:crypto';
import { MemoryErasedException } from './exceptions/memory-erased.exception';
import { MemoryFullException } from './exceptions/memory-full.exception';
import { checkCaps, checkEntry, checkPage, checkStoreOptions, checkToken, fitCaps, requireScope, scopeOf } from './memory-scope';
import { MemoryStore } from './memory.store';
import {
  MemoryEntry,
  MemoryListQuery,
  MemoryScope,
  MemoryStoreOptions,
  MemoryWriteToken,
  NewMemoryEntry,
  RecallCaps,
} from './memory.types';

interface Bucket {
  epoch: number;
  entries: MemoryEntry[];
}

const words = (text: string) => new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);

/**
 * Memory in process, for tests and demos: lost on restart. Buckets are keyed by tenant, then by
 * user (Maps, never a joined string). Relevance is the number of the goal's words an entry has. A write checks the
 * epoch and the cap and stores the entry with no await in between, so writes at once cannot pass maxNotesPerUser.
 */
export class InMemoryMemoryStore implements MemoryStore {
  private readonly tenants = new Map<string, Map<string, Bucket>>();
  private seq = 0;
  private readonly maxNotesPerUser: number;

  constructor(options: MemoryStoreOptions = {}) {
    this.maxNotesPerUser = checkStoreOptions(options).maxNotesPerUser;
  }

  private bucket(s: MemoryScope, create: boolean): Bucket | undefined {
    let users = this.tenants.get(s.tenantId);
    if (!users && create) this.tenants.set(s.tenantId, (users = new Map()));
    let b = users?.get(s.userId);
    if (!b && create && users) users.set(s.userId, (b = { epoch: 0, entries: [] }));
    return b;
  }

  private live(s: MemoryScope | null): MemoryEntry[] {
    if (!s) return [];
    const now = Date.now();
    return (this.bucket(s, false)?.entries ?? []).filter((e) => !e.expiresAt || e.expiresAt.getTime() > now);
  }

  async beginWrite(scope: MemoryScope): Promise<MemoryWriteToken> {
    const s = requireScope(scope);
    return { ...s, epoch: String(this.bucket(s, false)?.epoch ?? 0) };
  }

  async remember(scope: MemoryScope, entry: NewMemoryEntry, token?: MemoryWriteToken): Promise<string> {
    const s = requireScope(scope);
    const e = checkEntry(entry);
    const t = token ?? (await this.beginWrite(s));
    checkToken(s, t);
    const b = this.bucket(s, true) as Bucket;
    if (String(b.epoch) !== t.epoch) throw new MemoryErasedException(s.tenantId, s.userId);
    const now = Date.now();
    b.entries = b.entries.filter((x) => !x.expiresAt || x.expiresAt.getTime() > now); // expired notes go, and do not count
    if (b.entries.length >= this.maxNotesPerUser) throw new MemoryFullException(s.tenantId, s.userId, this.maxNotesPerUser);
    const id = randomUUID();
    // Strictly increasing times keep "newest first" a total order.
    const createdAt = new Date(Math.max(Date.now(), ++this.seq));
    b.entries.unshift({ id, ...s, agent: e.agent, kind: e.kind, content: e.content, createdAt, expiresAt: e.expiresAt ?? null });
    return id;
  }

  async recall(scope: MemoryScope, query: string, caps: RecallCaps): Promise<MemoryEntry[]> {
    const c = checkCaps(caps);
    const goal = words(typeof query === 'string' ? query : '');
    const scored = this.live(scopeOf(scope)).map((e, i) => ({ e, i, score: [...words(e.content)].filter((w) => goal.has(w)).length }));
    scored.sort((a, b) => b.score - a.score || a.i - b.i);
    return fitCaps(
      scored.slice(0, c.maxEntries).map((x) => x.e),
      c,
    );
  }

  async forget(scope: MemoryScope, id: string): Promise<boolean> {
    const s = scopeOf(scope);
    const b = s && this.bucket(s, false);
    if (!b) return false;
    const at = b.entries.findIndex((e) => e.id === id);
    if (at < 0) return false;
    b.entries.splice(at, 1);
    return true;
  }

  async erase(scope: MemoryScope): Promise<number> {
    const s = scopeOf(scope);
    if (!s) return 0;
    const b = this.bucket(s, true) as Bucket;
    const n = b.entries.length;
    b.entries = [];
    b.epoch++;
    return n;
  }

  async list(scope: MemoryScope, query: MemoryListQuery): Promise<MemoryEntry[]> {
    const p = checkPage(query);
    return this.live(scopeOf(scope)).slice(p.offset, p.offset + p.limit);
  }
}
