import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { queryRows } from '@zmodu/core';
import { MemoryErasedException } from './exceptions/memory-erased.exception';
import { MemoryFullException } from './exceptions/memory-full.exception';
import { fullTextRanker } from './full-text.ranker';
import { checkCaps, checkEntry, checkPage, checkStoreOptions, checkToken, fitCaps, requireScope, scopeOf } from './memory-scope';
import { MemoryStore } from './memory.store';
import {
  MemoryEntry,
  MemoryListQuery,
  MemoryRanker,
  MemoryScope,
  MemoryStoreOptions,
  MemoryWriteToken,
  NewMemoryEntry,
  RecallCaps,
} from './memory.types';

const COLUMNS = 'm.id, m.tenant_id, m.user_id, m.agent, m.kind, m.content, m.created_at, m.expires_at';
const UNEXPIRED = '(m.expires_at IS NULL OR m.expires_at > now())';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface Row {
  id: string;
  tenant_id: string;
  user_id: string;
  agent: string;
  kind: string;
  content: string;
  created_at: Date | string;
  expires_at: Date | string | null;
}

const toEntry = (r: Row): MemoryEntry => ({
  id: r.id,
  tenantId: r.tenant_id,
  userId: r.user_id,
  agent: r.agent,
  kind: r.kind,
  content: r.content,
  createdAt: new Date(r.created_at),
  expiresAt: r.expires_at == null ? null : new Date(r.expires_at),
});

/**
 * Memory on PostgreSQL (or PGlite) through TypeORM: the tables of ZMODU_MEMORY_MIGRATIONS. Every
 * statement has `tenant_id = $1 AND user_id = $2` in its own WHERE. A write locks the scope's erase row
 * (FOR UPDATE: the scope's writes one at a time) and lands only if the epoch is the one read when it started and the
 * scope holds fewer than maxNotesPerUser unexpired notes (counted in the INSERT's own statement, under that lock); an
 * erase bumps the epoch (an exclusive lock on that row, so it waits for writes in flight) and deletes the entries in the
 * same transaction, so no write started before it lands after it.
 */
export class TypeOrmMemoryStore implements MemoryStore {
  private readonly maxNotesPerUser: number;

  constructor(
    private readonly dataSource: DataSource,
    private readonly ranker: MemoryRanker = fullTextRanker,
    options: MemoryStoreOptions = {},
  ) {
    this.maxNotesPerUser = checkStoreOptions(options).maxNotesPerUser;
  }

  async beginWrite(scope: MemoryScope): Promise<MemoryWriteToken> {
    const s = requireScope(scope);
    const rows = await queryRows<{ epoch: string }>(
      this.dataSource,
      `SELECT COALESCE((SELECT epoch FROM zmodu_memory_erasures WHERE tenant_id = $1 AND user_id = $2), 0)::text AS epoch`,
      [s.tenantId, s.userId],
    );
    return { tenantId: s.tenantId, userId: s.userId, epoch: rows[0].epoch };
  }

  async remember(scope: MemoryScope, entry: NewMemoryEntry, token?: MemoryWriteToken): Promise<string> {
    const s = requireScope(scope);
    const e = checkEntry(entry);
    const t = token ?? (await this.beginWrite(s));
    checkToken(s, t);
    const id = randomUUID();
    const landed = await this.dataSource.transaction(async (m) => {
      await m.query(`INSERT INTO zmodu_memory_erasures (tenant_id, user_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [
        s.tenantId,
        s.userId,
      ]);
      // FOR UPDATE: an erase in flight (it holds the row exclusively) is waited for, then its epoch is seen; and the
      // scope's other writes wait for this one, so each counts the notes the one before it committed.
      const rows = await queryRows<{ epoch: string }>(
        m,
        `SELECT epoch::text AS epoch FROM zmodu_memory_erasures WHERE tenant_id = $1 AND user_id = $2 FOR UPDATE`,
        [s.tenantId, s.userId],
      );
      if (rows[0]?.epoch !== t.epoch) return 'erased';
      // Expired notes are never read again: they go now and do not count.
      await m.query(`DELETE FROM zmodu_memory WHERE tenant_id = $1 AND user_id = $2 AND expires_at <= now()`, [s.tenantId, s.userId]);
      const inserted = await queryRows(
        m,
        `INSERT INTO zmodu_memory (id, tenant_id, user_id, agent, kind, content, expires_at)
         SELECT $3, $1, $2, $4, $5, $6, $7 FROM zmodu_memory_erasures
         WHERE tenant_id = $1 AND user_id = $2 AND epoch = $8::bigint
           AND (SELECT count(*) FROM zmodu_memory WHERE tenant_id = $1 AND user_id = $2) < $9
         RETURNING id`,
        [s.tenantId, s.userId, id, e.agent, e.kind, e.content, e.expiresAt ?? null, t.epoch, this.maxNotesPerUser],
      );
      return inserted.length === 1 ? 'landed' : 'full';
    });
    if (landed === 'erased') throw new MemoryErasedException(s.tenantId, s.userId);
    if (landed === 'full') throw new MemoryFullException(s.tenantId, s.userId, this.maxNotesPerUser);
    return id;
  }

  async recall(scope: MemoryScope, query: string, caps: RecallCaps): Promise<MemoryEntry[]> {
    const c = checkCaps(caps);
    const s = scopeOf(scope);
    if (!s) return [];
    const goal = typeof query === 'string' ? query : '';
    const rows = await queryRows<Row & { score: number }>(
      this.dataSource,
      `SELECT ${COLUMNS}, COALESCE(${this.ranker.score('$3')}, 0) AS score FROM zmodu_memory m
       WHERE m.tenant_id = $1 AND m.user_id = $2 AND ${UNEXPIRED}
       ORDER BY score DESC, m.created_at DESC, m.id LIMIT $4`,
      [s.tenantId, s.userId, await this.ranker.prepare(goal), c.maxEntries],
    );
    return fitCaps(rows.map(toEntry), c);
  }

  async forget(scope: MemoryScope, id: string): Promise<boolean> {
    const s = scopeOf(scope);
    if (!s || typeof id !== 'string' || !UUID.test(id)) return false;
    const rows = await queryRows(
      this.dataSource,
      `DELETE FROM zmodu_memory WHERE tenant_id = $1 AND user_id = $2 AND id = $3 RETURNING id`,
      [s.tenantId, s.userId, id],
    );
    return rows.length > 0;
  }

  async erase(scope: MemoryScope): Promise<number> {
    const s = scopeOf(scope);
    if (!s) return 0;
    return this.dataSource.transaction(async (m) => {
      // The exclusive row lock waits for writes holding it FOR SHARE; later writes see the new epoch.
      await m.query(
        `INSERT INTO zmodu_memory_erasures (tenant_id, user_id, epoch, erased_at) VALUES ($1, $2, 1, now())
         ON CONFLICT (tenant_id, user_id) DO UPDATE SET epoch = zmodu_memory_erasures.epoch + 1, erased_at = now()`,
        [s.tenantId, s.userId],
      );
      const gone = await queryRows(m, `DELETE FROM zmodu_memory WHERE tenant_id = $1 AND user_id = $2 RETURNING id`, [
        s.tenantId,
        s.userId,
      ]);
      return gone.length;
    });
  }

  async list(scope: MemoryScope, query: MemoryListQuery): Promise<MemoryEntry[]> {
    const p = checkPage(query);
    const s = scopeOf(scope);
    if (!s) return [];
    const rows = await queryRows<Row>(
      this.dataSource,
      `SELECT ${COLUMNS} FROM zmodu_memory m WHERE m.tenant_id = $1 AND m.user_id = $2 AND ${UNEXPIRED}
       ORDER BY m.created_at DESC, m.id LIMIT $3 OFFSET $4`,
      [s.tenantId, s.userId, p.limit, p.offset],
    );
    return rows.map(toEntry);
  }
}
