import { ownOptions } from '@zmodu/core';
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
  /** Where events live. Default a TypeOrmOutboxStore on the app's TypeORM DataSource; yours must pass outboxStoreContract. */
  store?: OutboxStore;
  /**
   * How long a command.execute waits for another call holding the same key (each waiter holds a
   * database connection) before answering the retryable `command_in_progress`. Default 5000 ms.
   */
  commandLockWaitMs?: number = 5_000;
}

/** The options after the defaults are merged: what the module's providers inject (through OUTBOX_OPTIONS). */
export type ResolvedOutboxOptions = OutboxModuleOptions & Required<Omit<OutboxModuleOptions, 'store'>>;

/** Merge the given options over the defaults, once; a field given as `undefined` keeps its default. */
export function resolveOutboxOptions(raw: Partial<OutboxModuleOptions> | undefined): ResolvedOutboxOptions {
  const given = ownOptions(raw);
  return Object.assign(new OutboxModuleOptions(), given) as ResolvedOutboxOptions;
}
