import { DataSource, EntityManager } from 'typeorm';
import { queryRows, returning } from '@zmodu/core';
import { StatementSlot, TAKE_SLOT_SQL } from '@zmodu/db/internal';
import { SkillError } from '@zmodu/skills';
import { qualifiedTable, quoteIdent } from './identifiers';
import { busy } from './query/tenant-slots';

/** What bounds a write's hold on the database: its statements' deadline, and its tenant's share of slots. */
export interface WriteBounds {
  readonly timeoutMs: number;
  readonly slot?: StatementSlot;
}

export interface WritableEntity {
  readonly name: string;
  readonly table: string;
  readonly schema?: string;
  readonly pk: string;
  readonly resolvedTenantColumn: string | null | undefined;
  readonly columns?: readonly string[];
  readonly writable?: readonly string[];
  readonly references?: Readonly<Record<string, string>>;
}

interface ColumnInfo {
  readonly type: string;
  readonly nullable: boolean;
  readonly maxLength: number | null;
}

const NEUTRAL = 'The record could not be written: a value conflicts with an existing record, or points at a record that is not available.';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const INT_RANGE: Record<string, [number, number]> = {
  smallint: [-32768, 32767],
  integer: [-2147483648, 2147483647],
  bigint: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
};

/**
 * entity.create / entity.update: allow-listed entities and writable columns only; the tenant
 * column is set from the context and never taken from the model; primary keys are refused;
 * values are checked against the column types first; a reference must point at a record of the
 * caller's tenant; constraint violations come back as one neutral message (no existence oracle).
 */
export class EntityWriter {
  private readonly columnInfo = new Map<string, Promise<Map<string, ColumnInfo>>>();

  constructor(
    private readonly dataSource: () => DataSource,
    private readonly entity: (name: string) => WritableEntity,
    private readonly bounds: (tenantId: string | undefined) => WriteBounds = () => ({ timeoutMs: 5000 }),
  ) {}

  async create(name: string, values: Record<string, unknown>, tenantId: string | undefined) {
    const e = this.entity(name);
    const cols = await this.checkValues(e, values, tenantId);
    const names = Object.keys(values);
    const params: unknown[] = names.map((c) => toParam(values[c], cols.get(c) as ColumnInfo));
    const columns = names.map((c) => quoteIdent(c, 'column'));
    if (e.resolvedTenantColumn) {
      columns.push(quoteIdent(e.resolvedTenantColumn, 'tenant column'));
      params.push(tenantId);
    }
    const sql = `INSERT INTO ${qualifiedTable(e.table, e.schema)} (${columns.join(', ')}) VALUES (${params.map((_, i) => `$${i + 1}`).join(', ')}) RETURNING ${this.visible(e)}`;
    const rows = await this.write(e, values, tenantId, (m) => m.query(sql, params));
    return { entity: e.name, created: true, record: rows[0] ?? null };
  }

  async update(name: string, id: unknown, values: Record<string, unknown>, tenantId: string | undefined) {
    const e = this.entity(name);
    const cols = await this.checkValues(e, values, tenantId);
    const names = Object.keys(values);
    if (names.length === 0)
      throw new SkillError('nothing_to_update', 'values must name at least one writable column.', undefined, 'QueryRefused');
    const params: unknown[] = names.map((c) => toParam(values[c], cols.get(c) as ColumnInfo));
    const sets = names.map((c, i) => `${quoteIdent(c, 'column')} = $${i + 1}`);
    params.push(id);
    let where = `${quoteIdent(e.pk, 'pk')} = $${params.length}`;
    if (e.resolvedTenantColumn) {
      params.push(tenantId);
      where += ` AND ${quoteIdent(e.resolvedTenantColumn, 'tenant column')} = $${params.length}`;
    }
    const sql = `UPDATE ${qualifiedTable(e.table, e.schema)} SET ${sets.join(', ')} WHERE ${where} RETURNING ${this.visible(e)}`;
    const result = await this.write(e, values, tenantId, (m) => m.query(sql, params));
    const rows = returning(result);
    // Another tenant's record, or none: the same answer.
    return rows.length
      ? { entity: e.name, updated: true, record: rows[0] }
      : { entity: e.name, updated: false, found: false, record: null };
  }

  /** References checked and the statement run in one transaction; constraint errors made neutral. */
  private async write(
    e: WritableEntity,
    values: Record<string, unknown>,
    tenantId: string | undefined,
    statement: (m: EntityManager) => Promise<Record<string, unknown>[]>,
  ) {
    try {
      return await this.dataSource().transaction(async (m) => {
        // Each statement of the write under the data skills' deadline, enforced by the server (a row lock waited for
        // included), in one of its tenant's slots on the server.
        const { timeoutMs, slot } = this.bounds(tenantId);
        await m.query("SELECT pg_catalog.set_config('statement_timeout', $1, true)", [String(timeoutMs)]);
        if (slot && !(await queryRows<{ taken: boolean }>(m, TAKE_SLOT_SQL, [slot.key, slot.limit]))[0]?.taken) throw busy(slot.limit);
        for (const [column, target] of Object.entries(e.references ?? {})) {
          if (!(column in values) || values[column] === null) continue;
          const ref = this.entity(target);
          const params: unknown[] = [values[column]];
          let sql = `SELECT 1 FROM ${qualifiedTable(ref.table, ref.schema)} WHERE ${quoteIdent(ref.pk, 'pk')} = $1`;
          if (ref.resolvedTenantColumn) {
            params.push(tenantId);
            sql += ` AND ${quoteIdent(ref.resolvedTenantColumn, 'tenant column')} = $2`;
          }
          if ((await m.query(`${sql} FOR KEY SHARE`, params)).length === 0)
            throw new SkillError('write_refused', NEUTRAL, undefined, 'QueryRefused');
        }
        return statement(m);
      });
    } catch (err) {
      if (err instanceof SkillError) throw err;
      const code = (err as { driverError?: { code?: string } }).driverError?.code ?? '';
      if (code === '23505' || code === '23503') throw new SkillError('write_refused', NEUTRAL, undefined, 'QueryRefused');
      if (code.startsWith('23'))
        throw new SkillError(
          'constraint_violated',
          'The record breaks a rule of the table (a required value, or a check).',
          undefined,
          'QueryRefused',
        );
      if (code.startsWith('22')) throw new SkillError('invalid_input', 'A value does not fit its column.', undefined, 'QueryRefused');
      if (code === '57014')
        throw new SkillError('timeout', 'The write did not finish within its deadline (a record it needs may be locked); retry later.');
      throw err;
    }
  }

  private async checkValues(e: WritableEntity, values: unknown, tenantId: string | undefined): Promise<Map<string, ColumnInfo>> {
    const refuse = (reason: string, message: string): never => {
      throw new SkillError(reason, message, undefined, 'QueryRefused');
    };
    if (!e.writable?.length) refuse('entity_not_writable', `Entity ${e.name} is read-only.`);
    if (e.resolvedTenantColumn === undefined && tenantId)
      throw new SkillError(
        'TenantScopeUnavailable',
        `Entity ${e.name} has no tenant column configured.`,
        undefined,
        'TenantScopeUnavailable',
      );
    if (!values || typeof values !== 'object' || Array.isArray(values)) refuse('bad_request', 'values must be an object of column: value.');
    const writable = new Set(e.writable);
    const cols = await this.columns(e);
    for (const [column, value] of Object.entries(values as Record<string, unknown>)) {
      if (column === e.resolvedTenantColumn)
        refuse('tenant_column_not_allowed', `The tenant column ${column} is set from your context; leave it out.`);
      if (column === e.pk) refuse('primary_key_not_allowed', `The primary key ${column} cannot be written.`);
      if (!writable.has(column))
        refuse('column_not_writable', `Column ${column} is not writable on ${e.name}. Writable: ${[...writable].join(', ')}.`);
      const info = cols.get(column);
      if (!info) refuse('column_not_writable', `Column ${column} does not exist on ${e.name}.`);
      const problem = typeProblem(value, info as ColumnInfo);
      if (problem) refuse('invalid_value', `${column}: ${problem}.`);
    }
    return cols;
  }

  private visible(e: WritableEntity): string {
    return e.columns?.length ? [...new Set([e.pk, ...e.columns])].map((c) => quoteIdent(c, 'column')).join(', ') : '*';
  }

  private columns(e: WritableEntity): Promise<Map<string, ColumnInfo>> {
    let cached = this.columnInfo.get(e.name);
    if (!cached) {
      cached = this.dataSource()
        .query(
          `SELECT column_name, data_type, is_nullable, character_maximum_length FROM information_schema.columns WHERE table_name = $1 AND table_schema = coalesce($2, current_schema())`,
          [e.table, e.schema ?? null],
        )
        .then(
          (rows: Array<Record<string, unknown>>) =>
            new Map(
              rows.map((r) => [
                String(r.column_name),
                {
                  type: String(r.data_type),
                  nullable: r.is_nullable === 'YES',
                  maxLength: r.character_maximum_length === null ? null : Number(r.character_maximum_length),
                },
              ]),
            ),
        );
      cached.catch(() => this.columnInfo.delete(e.name));
      this.columnInfo.set(e.name, cached);
    }
    return cached;
  }
}

function typeProblem(value: unknown, c: ColumnInfo): string | null {
  if (value === null) return c.nullable ? null : 'may not be null';
  const t = c.type;
  if (t in INT_RANGE) {
    const [lo, hi] = INT_RANGE[t];
    return typeof value === 'number' && Number.isInteger(value) && value >= lo && value <= hi ? null : `must be a whole number (${t})`;
  }
  if (t === 'numeric' || t === 'real' || t === 'double precision')
    return (typeof value === 'number' && Number.isFinite(value)) || (typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value))
      ? null
      : 'must be a number';
  if (t === 'text' || t === 'character varying' || t === 'character') {
    if (typeof value !== 'string') return 'must be a string';
    return c.maxLength !== null && value.length > c.maxLength ? `must be at most ${c.maxLength} characters` : null;
  }
  if (t === 'boolean') return typeof value === 'boolean' ? null : 'must be true or false';
  if (t === 'uuid') return typeof value === 'string' && UUID.test(value) ? null : 'must be a UUID';
  if (t === 'date' || t.startsWith('timestamp'))
    return typeof value === 'string' && !Number.isNaN(Date.parse(value)) ? null : 'must be an ISO 8601 date or timestamp';
  if (t === 'json' || t === 'jsonb') return null;
  return `has a type (${t}) that entity.create/update does not write`;
}

function toParam(value: unknown, c: ColumnInfo): unknown {
  return c.type === 'json' || c.type === 'jsonb' ? JSON.stringify(value) : value;
}
