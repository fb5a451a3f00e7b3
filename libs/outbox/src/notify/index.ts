export { NotifyModule } from './notify.module';
export type { NotifyModuleAsyncOptions } from './notify.module-definition';
export { DEFAULT_WEBHOOK_TIMEOUT_MS, NotifyModuleOptions } from './notify.options';
export type { ChannelSpec, NotificationMessage, SendNotificationArgs } from './notify.types';
export { WEBHOOK_TOPIC } from './notify.constants';
export { signWebhook } from './webhook-signature';
