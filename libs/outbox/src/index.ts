// The public API of @zmodu/outbox. Anything not named here is internal.
export { OutboxModule } from './outbox.module';
export type { OutboxModuleAsyncOptions } from './outbox.module-definition';
export { DEFAULT_MAX_ATTEMPTS, OutboxModuleOptions } from './outbox.options';
export type { OutboxModuleRelayOptions } from './outbox.options';
export { InjectOutboxStore, OUTBOX_STORE } from './outbox.constants';
export type {
  CommandContext,
  CommandDefinition,
  CommandEvent,
  DeliveryContext,
  OutboxCommandStamp,
  OutboxEvent,
  OutboxHandler,
  OutboxStatus,
} from './outbox.types';
export type {
  ClaimedEvent,
  ClaimRequest,
  DeliveredSettlement,
  FailedSettlement,
  NewOutboxEvent,
  OutboxBacklog,
  OutboxListQuery,
  OutboxPage,
  OutboxStore,
} from './outbox.store';
export { OutboxService } from './outbox.service';
export type { EnqueueInput } from './outbox.service';
export { LEASE_MARGIN_MS, OutboxRelay } from './outbox-relay';
export type { RelayOptions, RelayPass } from './outbox-relay';
export { ZMODU_OUTBOX_MIGRATIONS } from './outbox.migration';
export { TypeOrmOutboxStore } from './typeorm-outbox.store';
export { canonicalJson, commandArgsHash, commandKey } from './command-key';
export { DEFAULT_WEBHOOK_TIMEOUT_MS, NotifyModule, NotifyModuleOptions, signWebhook, WEBHOOK_TOPIC } from './notify';
export type { ChannelSpec, NotificationMessage, NotifyModuleAsyncOptions, SendNotificationArgs } from './notify';
export { ChannelNeedsOutboxException } from './exceptions/channel-needs-outbox.exception';
export { CommandEventMissingException } from './exceptions/command-event-missing.exception';
export { DuplicateTopicHandlerException } from './exceptions/duplicate-topic-handler.exception';
export { InvalidChannelException } from './exceptions/invalid-channel.exception';
export { InvalidCommandException } from './exceptions/invalid-command.exception';
export { InvalidOutboxEventException } from './exceptions/invalid-outbox-event.exception';
export { InvalidOutboxQueryException } from './exceptions/invalid-outbox-query.exception';
export { InvalidRelayOptionsException } from './exceptions/invalid-relay-options.exception';
export { OutboxConflictException } from './exceptions/outbox-conflict.exception';
export { OutboxDataSourceMissingException } from './exceptions/outbox-data-source-missing.exception';
export { RelayCrash } from './exceptions/relay-crash.exception';
export { WebhookDeliveryException } from './exceptions/webhook-delivery.exception';
