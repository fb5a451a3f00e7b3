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
  OutboxListQuery,
  OutboxPage,
  OutboxStore,
} from './outbox.store';
export { OutboxConflictException, OutboxService } from './outbox.service';
export type { EnqueueInput } from './outbox.service';
export { LEASE_MARGIN_MS, OutboxRelay, RelayCrash } from './outbox-relay';
export type { RelayOptions, RelayPass } from './outbox-relay';
export { ZMODU_OUTBOX_MIGRATIONS } from './outbox.migration';
export { TypeOrmOutboxStore } from './typeorm-outbox.store';
export { canonicalJson, commandArgsHash, commandKey } from './command-key';
export { NotifyModule, NotifyModuleOptions, signWebhook, WEBHOOK_TOPIC } from './notify';
export type { ChannelSpec, NotificationMessage, NotifyModuleAsyncOptions, SendNotificationArgs } from './notify';
