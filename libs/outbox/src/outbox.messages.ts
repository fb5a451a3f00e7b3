export const RELAY_OPTION_MESSAGE = (name: string, value: unknown, rule: string) =>
  `OutboxRelay: ${name} is ${JSON.stringify(value)}; it must be ${rule}.`;

export const RELAY_LEASE_MESSAGE = (leaseMs: number, handlerTimeoutMs: number) =>
  `OutboxRelay: leaseMs (${leaseMs}) must be longer than handlerTimeoutMs (${handlerTimeoutMs}). A lease covers one delivery: ` +
  'a handler still running when its lease runs out can be delivered a second time by another relay. ' +
  'Raise leaseMs (or leave it out: the default is handlerTimeoutMs + 5000) or lower handlerTimeoutMs.';

export const IDEMPOTENCY_CONFLICT_MESSAGE = (runId: string, stored: string, asked: string) =>
  stored === asked
    ? `Run ${runId} already executed command '${stored}' with other arguments. A run id is the idempotency key of one command: ` +
      'retry with the same arguments to get its event back, or use a new run id for a new command.'
    : `Run ${runId} already executed command '${stored}', not '${asked}'. A run id is the idempotency key of one command: ` +
      'use a new run id for a new command.';

export const RELAY_CRASH_MESSAGE = (where: string) => `relay crashed ${where}`;

export const DUPLICATE_TOPIC_HANDLER_MESSAGE = (topic: string) =>
  `Outbox topic '${topic}' already has a handler. One topic has one handler: give the other handler a topic of its own, or do both in one.`;

export const OUTBOX_NOT_DEAD_MESSAGE = (id: string, status: string) =>
  `Event ${id} is ${status}, not dead: only a dead-lettered event can be retried.`;

export const EVENT_TOPIC_MISSING_MESSAGE = () => 'an outbox event needs a topic: give it a non-empty `topic` string.';

export const INVALID_OUTBOX_STATUS_MESSAGE = (statuses: readonly string[]) => `status must be one of ${statuses.join(', ')}`;

export const COMMAND_NAME_MESSAGE = (name: unknown) =>
  `OutboxModule: command name ${JSON.stringify(name)} must be lower-case dotted words (e.g. 'order.cancel').`;

export const COMMAND_HANDLER_MESSAGE = (name: string) =>
  `OutboxModule: command '${name}' needs a handler: (args, { transaction, invocation }) => ({ topic, payload }).`;

export const COMMAND_DUPLICATE_MESSAGE = (name: string) => `OutboxModule: two commands are named '${name}': rename one of them.`;

export const COMMAND_SCHEMA_MESSAGE = (name: string, problem: string) => `OutboxModule: command '${name}': ${problem}.`;

export const COMMAND_EVENT_MISSING_MESSAGE = (name: string) => `command '${name}' must return the event to publish: { topic, payload }`;

export const CHANNEL_NAME_MESSAGE = (name: string) =>
  `NotifyModule: channel name ${JSON.stringify(name)} must be lower-case (letters, digits, '_', '.', '-', starting with a letter).`;

export const CHANNEL_PROBLEM_MESSAGE = (name: string, problem: string) => `NotifyModule: channel ${name}: ${problem}.`;

export const CHANNEL_NEEDS_OUTBOX_MESSAGE = (name: string) =>
  `NotifyModule: channel ${name} goes through the outbox: import OutboxModule.forRoot() (with a TypeORM DataSource or a store of your own).`;

export const CHANNEL_NOT_WEBHOOK_MESSAGE = (channel: string) => `channel ${channel} is no longer a webhook`;

export const WEBHOOK_STATUS_MESSAGE = (status: number) => `webhook answered ${status}`;
