import { Module } from '@nestjs/common';
import { NOTIFY_OPTIONS } from './notify.constants';
import { ConfigurableNotifyModule, NOTIFY_MODULE_OPTIONS } from './notify.module-definition';
import { NotifyModuleOptions, resolveNotifyOptions } from './notify.options';
import { NotifySkill } from './notify.skill';
import { WebhookDelivery } from './webhook-delivery';

/**
 * notification.send over the channels of the options (`forRoot` or `forRootAsync`). Webhook and
 * outbox channels need OutboxModule.
 */
@Module({
  providers: [
    { provide: NOTIFY_OPTIONS, inject: [NOTIFY_MODULE_OPTIONS], useFactory: (raw: NotifyModuleOptions) => resolveNotifyOptions(raw) },
    NotifySkill,
    WebhookDelivery,
  ],
})
export class NotifyModule extends ConfigurableNotifyModule {}
