import type { EntityManager } from 'typeorm';
import { returning } from '@zmodu/core';

const MANAGER = Symbol('zmodu:transaction-manager');

/**
 * An open database transaction, handed to code whose writes must commit together with ours
 * (a staged skill's handler, an outbox command). Opaque on purpose: write through `query`,
 * which answers rows (also for UPDATE/DELETE ... RETURNING); when you use TypeORM, get the
 * transaction's EntityManager with `entityManagerOf(tx)`. Never commit or roll it back yourself:
 * throw to roll it back.
 */
export interface SkillTransaction {
  query<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  readonly [MANAGER]: EntityManager;
}

/** @internal Wrap a TypeORM EntityManager that runs in a transaction. */
export function transactionOf(manager: EntityManager): SkillTransaction {
  return Object.freeze({
    query: async <T>(sql: string, params: readonly unknown[] = []) => returning(await manager.query(sql, [...params])) as T[],
    [MANAGER]: manager,
  }) as SkillTransaction;
}

/** The TypeORM EntityManager of a transaction handle: `entityManagerOf(tx).getRepository(Order).save(...)`. */
export function entityManagerOf(tx: SkillTransaction): EntityManager {
  const manager = tx?.[MANAGER];
  if (!manager) throw new TypeError('entityManagerOf needs the transaction handle zmodu passed to your handler.');
  return manager;
}
