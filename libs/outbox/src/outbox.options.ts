import { checkStoreChoice, ownOptions } from '@zmodu/core';
import { InvalidOutboxOptionsException } from './exceptions/invalid-outbox-options.exception';
import { RelayOptions } from './outbox-relay';
import { OutboxStore } from './outbox.store';
import { CommandDefinition, OutboxHandler } from './outbox.types';

/** Attempts before an event is dead-lettered, when nothing else is said (OutboxModule's `maxAttempts`, OutboxService). */
export const DEFAULT_MAX_ATTEMPTS = 5;

/** The relay OutboxModule runs in process: OutboxRelay's options, and whether it starts at boot. */
export type OutboxModuleRelayOptions = RelayOptions & {
  /** `false` leaves starting it to you (e.g. one worker process). Default true. */
  readonly autoStart?: boolean;
};

/** Options of `OutboxModule.forRoot` / `forRootAsync`. Every field has a default. */
export class OutboxModuleOptions {
  /** Application commands for command.execute. */
  commands?: CommandDefinition[] = [];
  /** Delivery handlers by topic (more can be added with OutboxRelay.on). */
  handlers?: Record<string, OutboxHandler> = {};
  /** The in-process relay; `autoStart: false` leaves starting it to you (e.g. one worker process). */
  relay?: OutboxModuleRelayOptions = {};
  /** Attempts before an event is dead-lettered. Default 5. */
  maxAttempts?: number = DEFAULT_MAX_ATTEMPTS;
  /** Permission command.execute requires. Default 'command:execute'. */
  commandPermission?: string = 'command:execute';
  /**
   * Where events live: 'typeorm' (default: a TypeOrmOutboxStore on the app's DataSource) or an OutboxStore of yours (it
   * must pass outboxStoreContract). No 'memory': an event commits in the transaction of the write that caused it.
   */
  store?: 'typeorm' | OutboxStore = 'typeorm';
  /**
   * How long a command.execute waits for another call holding the same key (each waiter holds a
   * database connection) before answering the retryable `command_in_progress`. Default 5000 ms.
   */
  commandLockWaitMs?: number = 5_000;
}

/** The options after the defaults are merged: what the module's providers inject (through OUTBOX_OPTIONS). */
export type ResolvedOutboxOptions = Required<OutboxModuleOptions>;

/** What OutboxModule tells the store resolver of @zmodu/core about its `store`. */
export const OUTBOX_STORE_CHOICE = {
  option: 'OutboxModule.forRoot({ store })',
  keeps: 'the outbox events',
  methods: [
    'transaction',
    'enqueue',
    'lockKey',
    'findByKey',
    'get',
    'list',
    'retryDead',
    'claim',
    'renew',
    'settleDelivered',
    'settleFailed',
    'reapExpired',
  ],
  noMemory:
    "an event commits in the database transaction of the write that caused it; use 'typeorm' (the embedded database of @zmodu/db needs no server) or an OutboxStore of your own",
  invalid: (problem: string) => new InvalidOutboxOptionsException(`OutboxModule.forRoot({ store }): ${problem}`),
} as const;

/** Merge the given options over the defaults, once; a field given as `undefined` keeps its default. */
export function resolveOutboxOptions(raw: Partial<OutboxModuleOptions> | undefined): ResolvedOutboxOptions {
  const given = ownOptions(raw);
  const options = Object.assign(new OutboxModuleOptions(), given) as ResolvedOutboxOptions;
  checkStoreChoice({ ...OUTBOX_STORE_CHOICE, choice: options.store });
  return options;
}
