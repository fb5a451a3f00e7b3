// The public API of @zmodu/outbox. Anything not named here is internal.
export { OutboxModule } from './outbox.module';
export type { OutboxModuleAsyncOptions } from './outbox.module-definition';
export { OutboxModuleOptions } from './outbox.options';
export type { OutboxModuleRelayOptions } from './outbox.options';
export { InjectOutboxStore } from './outbox.constants';
export type {
  CommandContext,
  CommandDefinition,
  CommandEvent,
  DeliveryContext,
  OutboxEvent,
  OutboxHandler,
  OutboxStatus,
} from './outbox.types';
export type { OutboxPage, OutboxStore } from './outbox.store';
export { OutboxService } from './outbox.service';
export { ZMODU_OUTBOX_MIGRATIONS } from './outbox.migration';
export { NotifyModule, NotifyModuleOptions, signWebhook } from './notify';
export type { ChannelSpec, NotificationMessage, NotifyModuleAsyncOptions } from './notify';
export { OutboxConflictException } from './exceptions/outbox-conflict.exception';
export { ZmoduError } from '@zmodu/core';
