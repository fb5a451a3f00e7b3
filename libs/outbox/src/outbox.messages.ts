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
