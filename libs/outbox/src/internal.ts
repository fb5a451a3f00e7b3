// @zmodu/outbox/internal: what the other @zmodu packages (and this repository's tests) need from @zmodu/outbox and an
// application must not use. ESLint admits it only from libs/, apps/cli, test/ and bench/; it is not covered by semantic versioning.
export { OUTBOX_STORE } from './outbox.constants';
export type { OutboxBacklog } from './outbox.store';
export { OutboxRelay } from './outbox-relay';
export { TypeOrmOutboxStore } from './typeorm-outbox.store';
export { ChannelNeedsOutboxException } from './exceptions/channel-needs-outbox.exception';
export { CommandEventMissingException } from './exceptions/command-event-missing.exception';
export { DuplicateTopicHandlerException } from './exceptions/duplicate-topic-handler.exception';
export { InvalidChannelException } from './exceptions/invalid-channel.exception';
export { InvalidCommandException } from './exceptions/invalid-command.exception';
export { InvalidOutboxEventException } from './exceptions/invalid-outbox-event.exception';
export { InvalidOutboxQueryException } from './exceptions/invalid-outbox-query.exception';
export { InvalidRelayOptionsException } from './exceptions/invalid-relay-options.exception';
export { InvalidOutboxOptionsException } from './exceptions/invalid-outbox-options.exception';
export { RelayCrash } from './exceptions/relay-crash.exception';
export { WebhookDeliveryException } from './exceptions/webhook-delivery.exception';
