import type { SkillInvocation } from '@zmodu/skills';
import type { JsonSchema } from '@zmodu/skills';
import type { SkillTransaction } from '@zmodu/skills/internal';

export type OutboxStatus = 'pending' | 'delivering' | 'delivered' | 'dead';

export interface OutboxEvent {
  readonly id: string;
  readonly tenantId: string | null;
  readonly topic: string;
  readonly payload: unknown;
  readonly idempotencyKey: string | null;
  readonly status: OutboxStatus;
  readonly attempts: number;
  readonly maxAttempts: number;
  readonly nextAttemptAt: Date;
  readonly lastError: string | null;
  readonly createdAt: Date;
  readonly deliveredAt: Date | null;
  /** For an event of command.execute: the command, and the hash of its name and canonical arguments. */
  readonly command: OutboxCommandStamp | null;
}

/** What command.execute stores with its event, to tell a replay (same command and arguments) from a conflict. */
export interface OutboxCommandStamp {
  readonly name: string;
  /** sha256 of the command name and its arguments with sorted keys (see `commandArgsHash`). */
  readonly argsHash: string;
}

/** What a delivery handler gets: the event, and the lease it is delivered under. */
export interface DeliveryContext {
  /** Increases with every claim of the event: a handler can fence its own writes with it. */
  readonly leaseToken: string;
  readonly attempt: number;
  readonly signal: AbortSignal;
}

/** Delivers one event, at least once: make it idempotent on `event.id`. Throw to retry later. */
export type OutboxHandler = (event: OutboxEvent, ctx: DeliveryContext) => Promise<void> | void;

/** What a command's business write produces: the event the outbox commits with it. */
export interface CommandEvent {
  readonly topic: string;
  readonly payload: unknown;
}

export interface CommandContext {
  /**
   * The command's transaction: write through `transaction.query(...)` (or TypeORM's
   * `entityManagerOf(transaction)`), and the write commits with the outbox event.
   */
  readonly transaction: SkillTransaction;
  readonly invocation: SkillInvocation;
}

/** An application command for command.execute. */
export interface CommandDefinition {
  readonly name: string;
  readonly description?: string;
  readonly parameters?: JsonSchema;
  /** The business write, in the outbox transaction; returns the event to publish. */
  readonly handler: (args: Record<string, unknown>, ctx: CommandContext) => Promise<CommandEvent> | CommandEvent;
}
