import { Inject, Injectable, OnModuleInit, Optional } from '@nestjs/common';
import { ownValue } from '@zmodu/core';
import { WebhookDeliveryException } from '../exceptions/webhook-delivery.exception';
import { OutboxRelay } from '../outbox-relay';
import { CHANNEL_NOT_WEBHOOK_MESSAGE, WEBHOOK_STATUS_MESSAGE } from '../outbox.messages';
import { OutboxEvent } from '../outbox.types';
import { NOTIFY_OPTIONS, WEBHOOK_TOPIC } from './notify.constants';
import { NotifyModuleOptions } from './notify.options';
import { NotificationMessage } from './notify.types';
import { signWebhook } from './webhook-signature';

/** Delivers the webhook notifications the outbox relays: one signed POST per attempt. */
@Injectable()
export class WebhookDelivery implements OnModuleInit {
  constructor(
    @Inject(NOTIFY_OPTIONS) private readonly options: NotifyModuleOptions,
    @Optional() private readonly relay?: OutboxRelay,
  ) {}

  onModuleInit(): void {
    if (Object.values(this.options.channels).some((c) => c.type === 'webhook'))
      this.relay?.on(WEBHOOK_TOPIC, (event, ctx) => this.post(event, ctx.signal));
  }

  /**
   * Deliver one webhook attempt (the options were resolved: a webhook channel has its timeoutMs): POST, signed, under a
   * timeout; anything but 2xx fails the attempt (the outbox retries).
   */
  async post(event: OutboxEvent, signal: AbortSignal): Promise<void> {
    const message = event.payload as NotificationMessage;
    const spec = ownValue(this.options.channels, message.channel);
    if (!spec || spec.type !== 'webhook') throw new WebhookDeliveryException(CHANNEL_NOT_WEBHOOK_MESSAGE(message.channel));
    const body = JSON.stringify(message);
    const timestamp = String(Math.floor(Date.now() / 1000));
    const res = await fetch(spec.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-zmodu-event': event.id,
        'x-zmodu-timestamp': timestamp,
        'x-zmodu-signature': signWebhook(spec.secret, timestamp, body),
      },
      body,
      signal: AbortSignal.any([signal, AbortSignal.timeout(spec.timeoutMs as number)]),
      redirect: 'manual',
    });
    await res.arrayBuffer().catch(() => undefined);
    if (res.status < 200 || res.status > 299) throw new WebhookDeliveryException(WEBHOOK_STATUS_MESSAGE(res.status));
  }
}
