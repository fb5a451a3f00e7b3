import { DataSource, EntityManager } from 'typeorm';
import { ActionClass } from '../action-class';
import {
  AuditChainLink,
  AuditChainPlace,
  AuditChainVerdict,
  AUDIT_CHAIN_GENESIS,
  AuditPayloadTexts,
  auditPayloadTexts,
  chainEntries,
  verifyChainLinks,
} from './audit-chain';
import {
  AuditDeadLetter,
  AuditDeadLetterRecord,
  AuditEntry,
  AuditOutcome,
  AuditQuery,
  AuditRecord,
  checkAuditQuery,
  clampAuditLimit,
  cleanText,
} from './audit-entry';
import { AuditLogStore, AuditTransaction } from './audit-log.store';
import { isRowRefused } from '@zmodu/core';

/** Rows per INSERT statement (19 parameters a row). */
const INSERT_ROWS = 1000;

/** Rows read per query while verifying a chain. */
const CHAIN_PAGE = 1000;

/** A row of `zmodu_audit_log` as this store reads it (the table is the guard migrations'; no TypeORM entity maps it). */
interface AuditLogRow {
  id: string;
  runId: string;
  agent: string | null;
  tenantId: string | null;
  userId: string | null;
  skill: string;
  action: string;
  decision: string;
  cause: string | null;
  outcome: string;
  durationMs: number;
  tokens: number;
  at: Date;
  proposalId: string | null;
  /** jsonb: an array, or its text on a driver that does not parse jsonb. */
  approvers: string[] | string | null;
  /** The call's arguments as audit text (canonical JSON, redacted; see auditPayloadText); null when none were kept. */
  args: string | null;
  /** The call's value or error body as audit text, like `args`. */
  result: string | null;
  /** Position in the tenant's hash chain (1, 2, ...); null for rows written before the chain (migration 1764520000000). */
  seq: string | null;
  /** The hash of the previous entry of the tenant's chain (64 zeros for the first). */
  prevHash: string | null;
  /** SHA-256 (hex) of the canonical JSON of this entry's fields, seq and prev_hash (see audit-chain.ts). */
  hash: string | null;
}

/** The columns read back as AuditLogRow fields (`a` is zmodu_audit_log). */
const ROW_COLUMNS = `a.id::text AS id, run_id AS "runId", agent, tenant_id AS "tenantId", user_id AS "userId", skill, action, decision,
  cause, outcome, duration_ms AS "durationMs", tokens, at, proposal_id AS "proposalId", approvers, args, result`;

/** The columns of one entry, without its place in the chain. Internal (also the bench's unchained baseline). */
export function auditLogRow(
  e: AuditEntry,
  payload: AuditPayloadTexts = auditPayloadTexts(e),
): Omit<AuditLogRow, 'id' | 'seq' | 'prevHash' | 'hash'> & { approvers: string[] | null } {
  return {
    runId: e.runId,
    agent: e.agent,
    tenantId: e.tenantId,
    userId: e.userId,
    skill: e.skill,
    action: e.action,
    decision: e.decision,
    cause: e.cause,
    outcome: e.outcome,
    durationMs: Math.round(e.durationMs),
    tokens: Math.round(e.tokens),
    at: e.at,
    proposalId: e.proposalId ?? null,
    approvers: e.approvers ? [...e.approvers] : null,
    args: payload.args ?? null,
    result: payload.result ?? null,
  };
}

/**
 * Multi-row INSERTs of `entries` in plain SQL (TypeORM's query builder costs twice the statement itself on a batch of 100),
 * at most INSERT_ROWS rows each (PostgreSQL takes at most 65,535 parameters a statement), with each entry's place in its
 * chain when `links` has it. Internal (also the bench's unchained baseline, with no links).
 */
export async function insertAuditRows(
  m: Pick<EntityManager, 'query'>,
  entries: readonly AuditEntry[],
  links: ReadonlyMap<AuditEntry, AuditChainPlace> = new Map(),
): Promise<void> {
  for (let from = 0; from < entries.length; from += INSERT_ROWS) {
    const params: unknown[] = [];
    const rows = entries.slice(from, from + INSERT_ROWS).map((e) => {
      // The payload texts as the chain hashed them, when chained (computed once).
      const link = links.get(e);
      const r = auditLogRow(e, link);
      const values = [
        r.runId,
        r.agent,
        r.tenantId,
        r.userId,
        r.skill,
        r.action,
        r.decision,
        r.cause,
        r.outcome,
        r.durationMs,
        r.tokens,
        r.at,
        r.proposalId,
        r.approvers === null ? null : JSON.stringify(r.approvers),
        r.args,
        r.result,
        link?.seq,
        link?.prevHash,
        link?.hash,
      ];
      const first = params.length;
      params.push(...values);
      return `(${values.map((_, i) => `$${first + i + 1}`).join(', ')})`;
    });
    await m.query(
      `INSERT INTO zmodu_audit_log (run_id, agent, tenant_id, user_id, skill, action, decision, cause, outcome, duration_ms, tokens, at,
         proposal_id, approvers, args, result, seq, prev_hash, hash) VALUES ${rows.join(', ')}`,
      params,
    );
  }
}

/** How often the locked way is tried when optimistic writers keep winning the sequence numbers it read. */
const LOCKED_ATTEMPTS = 20;

const GENESIS_HEAD = { seq: 0, hash: AUDIT_CHAIN_GENESIS };

/** How many tenants' heads a store remembers by default (about 200 bytes each). */
const REMEMBERED_HEADS = 10_000;

/** Options of TypeOrmAuditLogStore. */
export interface TypeOrmAuditLogStoreOptions {
  /**
   * How many tenants' chain heads the store remembers from its own writes, to chain their next batch without reading the
   * table (default 10,000; the least recently written tenant is forgotten first). 0: read every tenant's head each batch.
   */
  readonly rememberHeads?: number;
}

function groupByTenant(entries: readonly AuditEntry[]): Map<string | null, AuditEntry[]> {
  const byTenant = new Map<string | null, AuditEntry[]>();
  for (const e of entries) {
    const group = byTenant.get(e.tenantId);
    if (group) group.push(e);
    else byTenant.set(e.tenantId, [e]);
  }
  return byTenant;
}

/** Locks taken in one order (untenanted first, then by tenant), so two batches of several tenants cannot deadlock. */
function lockOrder(tenants: Iterable<string | null>): Array<string | null> {
  return [...tenants].sort((a, b) => (a === b ? 0 : a === null ? -1 : b === null ? 1 : a < b ? -1 : 1));
}

/** Each entry's place in its tenant's chain, after that tenant's head. */
function chainGroups(
  byTenant: ReadonlyMap<string | null, readonly AuditEntry[]>,
  head: (tenantId: string | null) => { seq: number; hash: string },
): Map<AuditEntry, AuditChainPlace> {
  const links = new Map<AuditEntry, AuditChainPlace>();
  for (const [tenantId, group] of byTenant) {
    const chained = chainEntries(head(tenantId), group);
    group.forEach((e, i) => links.set(e, chained[i]));
  }
  return links;
}

/** An intent's entry as written by writeIntent (its time back as a Date). */
function intentEntry(text: string): AuditEntry {
  const e = JSON.parse(text) as AuditEntry & { at: string };
  return { ...e, at: new Date(e.at) };
}

/** A unique violation of the chain's (tenant, seq) indexes: another writer took those sequence numbers first. */
function isChainConflict(err: unknown): boolean {
  const e = err as { code?: unknown; constraint?: unknown; message?: unknown; driverError?: { code?: unknown; constraint?: unknown } };
  const code = e?.code ?? e?.driverError?.code;
  const constraint = e?.constraint ?? e?.driverError?.constraint;
  if (code !== '23505') return false;
  const name = typeof constraint === 'string' ? constraint : typeof e.message === 'string' ? e.message : '';
  return /zmodu_audit_log_chain(_untenanted)?_idx/.test(name);
}

function toRecord(r: AuditLogRow): AuditRecord {
  return {
    id: String(r.id),
    runId: r.runId,
    agent: r.agent,
    tenantId: r.tenantId,
    userId: r.userId,
    skill: r.skill,
    action: r.action as ActionClass,
    decision: r.decision as 'allowed' | 'denied',
    cause: r.cause,
    outcome: r.outcome as AuditOutcome,
    durationMs: r.durationMs,
    tokens: r.tokens,
    at: r.at,
    proposalId: r.proposalId,
    approvers: typeof r.approvers === 'string' ? (JSON.parse(r.approvers) as string[]) : r.approvers,
    ...(r.args !== null && r.args !== undefined ? { args: JSON.parse(r.args) as unknown } : {}),
    ...(r.result !== null && r.result !== undefined ? { result: JSON.parse(r.result) as unknown } : {}),
  };
}

/**
 * The default audit store: table `zmodu_audit_log` (see the guard migrations). One INSERT per batch: the entries of each
 * tenant are chained after that tenant's head (the one this store wrote last, or read), and the unique (tenant, seq)
 * index refuses a batch chained after a head that moved; such a batch is chained again under an advisory lock of each
 * tenant held until commit. Concurrent writers leave one chain per tenant with no fork and no gap (see audit-chain.ts).
 * Entries PostgreSQL refused for what they hold (`refusesEntry`) are kept in `zmodu_audit_dead_letters` as escaped JSON text.
 */
export class TypeOrmAuditLogStore implements AuditLogStore {
  /**
   * The head this store last wrote, per tenant (most recently written last; at most REMEMBERED_HEADS). The next batch of a
   * remembered tenant chains after it without reading the table. If another writer moved the head meanwhile, the unique
   * (tenant, seq) index refuses the batch and the head is read again; if entries after it were deleted, the next entry
   * still links to the deleted one, so verify reports the deletion (a chain read afresh would hide a deleted tail).
   */
  private readonly written = new Map<string | null, { seq: number; hash: string }>();

  private readonly rememberHeads: number;

  constructor(
    private readonly dataSource: DataSource,
    options: TypeOrmAuditLogStoreOptions = {},
  ) {
    const n = options.rememberHeads ?? REMEMBERED_HEADS;
    if (!Number.isSafeInteger(n) || n < 0)
      throw new TypeError(`TypeOrmAuditLogStore: rememberHeads must be a whole number of 0 or more, got ${String(n)}`);
    this.rememberHeads = n;
  }

  /**
   * Forget the heads this store wrote, so the next batch reads each tenant's head from the table. For tests that empty the
   * audit table between cases with one store (otherwise the next entry links to an entry that is gone and verify says
   * `deleted`, which is what it is for).
   */
  forgetHeads(): void {
    this.written.clear();
  }

  /** An entry PostgreSQL refused for what it holds (a value out of range, a CHECK it breaks): see isRowRefused. */
  refusesEntry(err: unknown): boolean {
    return isRowRefused(err);
  }

  async append(entries: readonly AuditEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const byTenant = groupByTenant(entries);
    if (entries.length <= INSERT_ROWS) {
      // Optimistic first: the heads this store wrote last, or those read in one statement; the batch in one INSERT (one
      // statement: all or nothing), no transaction and no lock. A writer that chained after a head that moved meanwhile is
      // refused by the unique (tenant, seq) index, so no fork and no gap can be written; it then takes the locked way below.
      const heads = new Map<string | null, { seq: number; hash: string }>();
      const unknown: Array<string | null> = [];
      for (const t of byTenant.keys()) {
        const head = this.written.get(t);
        if (head) heads.set(t, head);
        else unknown.push(t);
      }
      if (unknown.length > 0) for (const [t, head] of await this.readHeads(unknown)) heads.set(t, head);
      const links = chainGroups(byTenant, (t) => heads.get(t) ?? GENESIS_HEAD);
      try {
        await insertAuditRows(this.dataSource.manager, entries, links);
        this.remember(byTenant, links);
        return;
      } catch (err) {
        for (const t of byTenant.keys()) this.written.delete(t);
        if (!isChainConflict(err)) throw err;
      }
    }
    // Locked: each tenant's head read under its advisory lock, held until commit. An optimistic writer (which takes no lock)
    // can still win a sequence number between our read and our INSERT; then this transaction is refused whole and tried again.
    for (let attempt = 1; ; attempt++) {
      try {
        const links = await this.dataSource.transaction(async (m) => {
          const heads = new Map<string | null, { seq: number; hash: string }>();
          for (const tenantId of lockOrder(byTenant.keys())) heads.set(tenantId, await this.lockHead(m, tenantId));
          const chained = chainGroups(byTenant, (t) => heads.get(t) ?? GENESIS_HEAD);
          await insertAuditRows(m, entries, chained);
          return chained;
        });
        this.remember(byTenant, links);
        return;
      } catch (err) {
        if (!isChainConflict(err) || attempt >= LOCKED_ATTEMPTS) throw err;
      }
    }
  }

  /** An entry kept in the caller's transaction (a staged execution's): it commits with the effect, or not at all. */
  async writeIntent(transaction: AuditTransaction, entry: AuditEntry): Promise<void> {
    await transaction.query('INSERT INTO zmodu_audit_intents (entry) VALUES ($1)', [JSON.stringify(entry)]);
  }

  /**
   * Chain committed intents: deleted and appended in one transaction, under the chain's locks (each tenant's head read
   * under its advisory lock), so each is appended exactly once; two movers skip each other's rows (SKIP LOCKED). An intent
   * whose entry PostgreSQL refuses for what it holds (`refusesEntry`) would fail every batch it is in: the batch is then
   * moved one intent at a time, and that one goes to the dead letters (in the transaction that deletes it).
   */
  async moveIntents(limit: number): Promise<number> {
    try {
      return await this.moveIntentBatch(limit, false);
    } catch (err) {
      if (!this.refusesEntry(err)) throw err;
      let moved = 0;
      while (moved < limit && (await this.moveIntentBatch(1, true)) > 0) moved++;
      return moved;
    }
  }

  /** Move up to `limit` intents in one transaction; with `setAsideRefused` (one intent), a refused one is set aside. */
  private async moveIntentBatch(limit: number, setAsideRefused: boolean): Promise<number> {
    for (let attempt = 1; ; attempt++) {
      try {
        const moved = await this.dataSource.transaction(async (m) => {
          const rows: Array<{ id: string; entry: string }> = await m.query(
            `WITH moved AS (
               DELETE FROM zmodu_audit_intents WHERE id IN (SELECT id FROM zmodu_audit_intents ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
               RETURNING id, entry)
             SELECT id::text AS id, entry FROM moved ORDER BY id`,
            [limit],
          );
          if (rows.length === 0) return null;
          const entries = rows.map((r) => intentEntry(r.entry));
          const byTenant = groupByTenant(entries);
          const heads = new Map<string | null, { seq: number; hash: string }>();
          for (const tenantId of lockOrder(byTenant.keys())) heads.set(tenantId, await this.lockHead(m, tenantId));
          const links = chainGroups(byTenant, (t) => heads.get(t) ?? GENESIS_HEAD);
          if (setAsideRefused) await m.query('SAVEPOINT zmodu_audit_intent');
          try {
            await insertAuditRows(m, entries, links);
          } catch (err) {
            if (!setAsideRefused || !this.refusesEntry(err)) throw err;
            await m.query('ROLLBACK TO SAVEPOINT zmodu_audit_intent');
            const error = cleanText((err as Error)?.message ?? String(err));
            await m.query('INSERT INTO zmodu_audit_dead_letters (entry, error, at) VALUES ($1, $2, $3)', [
              rows[0].entry,
              error,
              new Date(),
            ]);
            return { byTenant: new Map(), links: new Map(), n: entries.length };
          }
          return { byTenant, links, n: entries.length };
        });
        if (!moved) return 0;
        this.remember(moved.byTenant, moved.links);
        return moved.n;
      } catch (err) {
        if (!isChainConflict(err) || attempt >= LOCKED_ATTEMPTS) throw err;
      }
    }
  }

  /** Keep each tenant's new head (its last entry of the batch), the oldest remembered tenant forgotten past the bound. */
  private remember(byTenant: ReadonlyMap<string | null, readonly AuditEntry[]>, links: ReadonlyMap<AuditEntry, AuditChainPlace>): void {
    for (const [tenantId, group] of byTenant) {
      const last = links.get(group[group.length - 1]);
      if (!last) continue;
      this.written.delete(tenantId);
      this.written.set(tenantId, { seq: last.seq, hash: last.hash });
    }
    for (const oldest of this.written.keys()) {
      if (this.written.size <= this.rememberHeads) break;
      this.written.delete(oldest);
    }
  }

  /** The head (`seq`, `hash`) of each tenant's chain, in one statement; a tenant without a chain is left out. */
  private async readHeads(tenants: ReadonlyArray<string | null>): Promise<Map<string | null, { seq: number; hash: string }>> {
    const named = tenants.filter((t): t is string => t !== null);
    const parts: string[] = [];
    if (named.length > 0)
      parts.push(`SELECT t.tenant AS "tenantId", h.seq::text AS seq, h.hash FROM unnest($1::text[]) AS t(tenant)
         CROSS JOIN LATERAL (SELECT seq, hash FROM zmodu_audit_log a WHERE a.tenant_id = t.tenant AND a.seq IS NOT NULL
           ORDER BY a.seq DESC LIMIT 1) h`);
    // Ordered by the column (a.seq), not by the text output column of the same name (which put "9" after "10").
    if (named.length < tenants.length)
      parts.push(`SELECT * FROM (SELECT NULL::text AS "tenantId", a.seq::text AS seq, a.hash FROM zmodu_audit_log a
         WHERE a.tenant_id IS NULL AND a.seq IS NOT NULL ORDER BY a.seq DESC LIMIT 1) n`);
    const rows: Array<{ tenantId: string | null; seq: string; hash: string }> = await this.dataSource.query(
      parts.join(' UNION ALL '),
      named.length > 0 ? [named] : [],
    );
    return new Map(rows.map((r) => [r.tenantId, { seq: Number(r.seq), hash: r.hash }]));
  }

  /**
   * Walk the hash chain of one tenant (null: the entries without a tenant) and report the first entry that is not as
   * written, by sequence number. Reads the chain in pages; rows written before the chain (seq null) are ignored.
   */
  async verify(tenantId: string | null): Promise<AuditChainVerdict> {
    const [where, params] = tenantId === null ? ['tenant_id IS NULL', []] : ['tenant_id = $1', [tenantId]];
    const n = params.length;
    const hashExists = async (hash: string) =>
      (
        (await this.dataSource.query(`SELECT 1 FROM zmodu_audit_log WHERE ${where} AND hash = $${n + 1} LIMIT 1`, [
          ...params,
          hash,
        ])) as unknown[]
      ).length > 0;
    return verifyChainLinks(this.chainLinks(where, params), hashExists, await this.strayPosition(where, params));
  }

  /** Serialize the writers of one tenant's chain until the transaction ends, and read its head. */
  private async lockHead(m: EntityManager, tenantId: string | null): Promise<{ seq: number; hash: string }> {
    await m.query('SELECT pg_advisory_xact_lock(hashtext($1))', [tenantId === null ? 'zmodu_audit' : `zmodu_audit:${tenantId}`]);
    const rows: Array<{ head: string; hash: string }> =
      tenantId === null
        ? await m.query(
            'SELECT seq::text AS head, hash FROM zmodu_audit_log WHERE tenant_id IS NULL AND seq IS NOT NULL ORDER BY seq DESC LIMIT 1',
          )
        : await m.query(
            'SELECT seq::text AS head, hash FROM zmodu_audit_log WHERE tenant_id = $1 AND seq IS NOT NULL ORDER BY seq DESC LIMIT 1',
            [tenantId],
          );
    return rows.length === 0 ? { seq: 0, hash: AUDIT_CHAIN_GENESIS } : { seq: Number(rows[0].head), hash: rows[0].hash };
  }

  /** The chained rows of one tenant in sequence order, a page at a time (plain SQL: works on any DataSource of the database). */
  private async *chainLinks(where: string, params: unknown[]): AsyncGenerator<AuditChainLink> {
    const n = params.length;
    let after = ['0', '0'];
    for (;;) {
      const rows: Array<AuditLogRow & { atText: string }> = await this.dataSource.query(
        `SELECT ${ROW_COLUMNS}, a.seq::text AS seq, prev_hash AS "prevHash", hash,
           to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS "atText"
         FROM zmodu_audit_log a WHERE ${where} AND a.seq IS NOT NULL AND (a.seq, a.id) > ($${n + 1}::bigint, $${n + 2}::bigint)
         ORDER BY a.seq, a.id LIMIT ${CHAIN_PAGE}`,
        [...params, ...after],
      );
      // The timestamp is hashed as stored (microseconds, atText), not as a Date reads it back (milliseconds).
      // The arguments and result are hashed as the text stored, not as a value parsed back.
      for (const r of rows)
        yield {
          seq: Number(r.seq),
          prevHash: r.prevHash ?? '',
          hash: r.hash ?? '',
          at: r.atText,
          entry: toRecord(r),
          payload: { args: r.args ?? undefined, result: r.result ?? undefined },
        };
      if (rows.length < CHAIN_PAGE) return;
      after = [String(rows[rows.length - 1].seq), rows[rows.length - 1].id];
    }
  }

  /**
   * Where the first row of the tenant without a chain that was written after the audit was chained sits (the seq it
   * precedes), or null. Every row written since the chain migration has a chain, whatever its tenant: a row without one
   * and an id above the first chained id of any tenant (or an id the database never gives, below 1) was put there by hand.
   */
  private async strayPosition(where: string, params: unknown[]): Promise<number | null> {
    const n = params.length;
    const [stray]: Array<{ id: string }> = await this.dataSource.query(
      `SELECT a.id::text AS id FROM zmodu_audit_log a WHERE ${where} AND seq IS NULL
         AND (a.id < 1 OR a.id > (SELECT min(id) FROM zmodu_audit_log WHERE seq IS NOT NULL)) ORDER BY a.id LIMIT 1`,
      params,
    );
    if (!stray) return null;
    const [at]: Array<{ seq: string | null }> = await this.dataSource.query(
      `SELECT COALESCE(min(seq) FILTER (WHERE id > $${n + 1}::bigint), max(seq) + 1, 1)::text AS seq
         FROM zmodu_audit_log WHERE ${where} AND seq IS NOT NULL`,
      [...params, stray.id],
    );
    return Number(at.seq);
  }

  async query(filter: AuditQuery): Promise<AuditRecord[]> {
    checkAuditQuery(filter);
    const where: string[] = [];
    const params: unknown[] = [];
    const add = (column: string, value: unknown, op = '='): void => {
      params.push(value);
      where.push(`a.${column} ${op} $${params.length}`);
    };
    if (filter.runId !== undefined) add('run_id', filter.runId);
    if (filter.agent !== undefined) add('agent', filter.agent);
    if (filter.tenantId !== undefined) add('tenant_id', filter.tenantId);
    if (filter.userId !== undefined) add('user_id', filter.userId);
    if (filter.skill !== undefined) add('skill', filter.skill);
    if (filter.proposalId !== undefined) add('proposal_id', filter.proposalId);
    if (filter.decision !== undefined) add('decision', filter.decision);
    if (filter.outcome !== undefined) add('outcome', filter.outcome);
    if (filter.afterId !== undefined) add('id', filter.afterId, '>');
    if (filter.since !== undefined) add('at', filter.since, '>=');
    if (filter.until !== undefined) add('at', filter.until, '<=');
    params.push(clampAuditLimit(filter.limit));
    const rows: AuditLogRow[] = await this.dataSource.query(
      `SELECT ${ROW_COLUMNS}, a.seq::text AS seq, prev_hash AS "prevHash", hash FROM zmodu_audit_log a
         ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY a.id ASC LIMIT $${params.length}`,
      params,
    );
    return rows.map(toRecord);
  }

  async setAside(letters: readonly AuditDeadLetter[]): Promise<void> {
    if (letters.length === 0) return;
    const params: unknown[] = [];
    const rows = letters.map((l, i) => {
      // JSON.stringify escapes NUL and lone surrogates, so the text is always writable.
      params.push(JSON.stringify(l.entry), cleanText(l.error), l.at);
      return `($${i * 3 + 1}, $${i * 3 + 2}, $${i * 3 + 3})`;
    });
    await this.dataSource.query(`INSERT INTO zmodu_audit_dead_letters (entry, error, at) VALUES ${rows.join(', ')}`, params);
  }

  async deadLetters(limit?: number): Promise<AuditDeadLetterRecord[]> {
    const rows: Array<{ id: string; entry: string; error: string; at: Date | string }> = await this.dataSource.query(
      'SELECT id, entry, error, at FROM zmodu_audit_dead_letters ORDER BY id ASC LIMIT $1',
      [clampAuditLimit(limit)],
    );
    return rows.map((r) => {
      const raw = JSON.parse(r.entry) as AuditEntry & { at: string };
      return { id: String(r.id), entry: { ...raw, at: new Date(raw.at) }, error: r.error, at: new Date(r.at) };
    });
  }
}
