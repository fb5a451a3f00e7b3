import { createHmac } from 'node:crypto';
import { Inject, Injectable, Module, OnModuleInit, Optional } from '@nestjs/common';
import { ownValue } from '@zmodu/guard';
import { SkillError } from '@zmodu/skills';
import { SkillInvocation } from '@zmodu/skills';
import { SkillRegistry } from '@zmodu/skills';
import { OutboxRelay } from '../outbox-relay';
import { OutboxService } from '../outbox.service';
import { OutboxEvent } from '../outbox.types';

export interface NotificationMessage {
  readonly channel: string;
  readonly tenantId: string | null;
  readonly subject: string | null;
  readonly message: string;
  readonly data: unknown;
  readonly runId: string;
  readonly sentAt: string;
}

export type ChannelSpec =
  | {
      readonly type: 'webhook';
      readonly url: string;
      /** HMAC-SHA256 key of the X-Zmodu-Signature header. */
      readonly secret: string;
      /** Per attempt. Default 5000 ms. */
      readonly timeoutMs?: number;
      /** Attempts before the outbox dead-letters it. Default the outbox's. */
      readonly maxAttempts?: number;
    }
  | { readonly type: 'sink'; readonly handler: (message: NotificationMessage) => void | Promise<void> }
  | { readonly type: 'outbox'; readonly topic: string };

export class NotifyModuleOptions {
  /** The channels notification.send may use, by name: nothing else is reachable. */
  channels: Record<string, ChannelSpec> = {};
}

export const NOTIFY_MODULE_OPTIONS = Symbol('zmodu:NOTIFY_MODULE_OPTIONS');
export const WEBHOOK_TOPIC = 'zmodu.notify.webhook';

/** Sign a webhook body: `sha256=` + hex HMAC of `<timestamp>.<body>`. Receivers verify it the same way. */
export function signWebhook(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/** notification.send (propose): a message to a named channel (webhook, in-process sink, or outbox event). */
@Injectable()
export class NotifySkill implements OnModuleInit {
  constructor(
    @Inject(NOTIFY_MODULE_OPTIONS) private readonly options: NotifyModuleOptions,
    private readonly registry: SkillRegistry,
    @Optional() private readonly outbox?: OutboxService,
    @Optional() private readonly relay?: OutboxRelay,
  ) {
    for (const [name, spec] of Object.entries(options.channels ?? {})) {
      if (!/^[a-z][a-z0-9_.-]*$/.test(name)) throw new Error(`NotifyModule: channel name ${JSON.stringify(name)} must be lower-case.`);
      if (spec.type === 'webhook') {
        let url: URL;
        try {
          url = new URL(spec.url);
        } catch {
          throw new Error(`NotifyModule: channel ${name}: url is not a URL.`);
        }
        if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`NotifyModule: channel ${name}: url must be http(s).`);
        if (!spec.secret || spec.secret.length < 16)
          throw new Error(`NotifyModule: channel ${name}: a webhook needs a secret of 16+ characters to sign with.`);
      } else if (spec.type === 'sink') {
        if (typeof spec.handler !== 'function') throw new Error(`NotifyModule: channel ${name}: a sink needs a handler function.`);
      } else if (spec.type === 'outbox') {
        if (!spec.topic) throw new Error(`NotifyModule: channel ${name}: an outbox channel needs a topic.`);
      } else throw new Error(`NotifyModule: channel ${name}: type must be webhook, sink or outbox.`);
      if (spec.type !== 'sink' && (!outbox || !relay))
        throw new Error(
          `NotifyModule: channel ${name} goes through the outbox: import OutboxModule.forRoot() (with a TypeORM DataSource or a store of your own).`,
        );
    }
  }

  onModuleInit(): void {
    const names = Object.keys(this.options.channels ?? {});
    if (Object.values(this.options.channels).some((c) => c.type === 'webhook'))
      this.relay?.on(WEBHOOK_TOPIC, (event, ctx) => this.post(event, ctx.signal));
    this.registry.register({
      name: 'notification.send',
      action: 'propose',
      source: 'NotifyModule',
      description: `Send a notification to a named channel: ${names.join(', ') || '(none configured)'}. Webhooks are signed and retried.`,
      parameters: {
        type: 'object',
        properties: {
          channel: { type: 'string', enum: names.length ? names : ['(none configured)'] },
          subject: { type: 'string', maxLength: 200 },
          message: { type: 'string', minLength: 1, maxLength: 10_000 },
          data: { type: 'object' },
        },
        required: ['channel', 'message'],
        additionalProperties: false,
      },
      handler: (args, ctx) => this.send(args as { channel: string; subject?: string; message: string; data?: unknown }, ctx),
    });
  }

  async send(args: { channel: string; subject?: string; message: string; data?: unknown }, ctx: SkillInvocation) {
    const spec = ownValue(this.options.channels, args.channel);
    if (!spec) throw new SkillError('channel_not_allowed', `Channel ${args.channel} is not configured.`);
    const message: NotificationMessage = {
      channel: args.channel,
      tenantId: ctx.tenantId ?? null,
      subject: args.subject ?? null,
      message: args.message,
      data: args.data ?? null,
      runId: ctx.runId,
      sentAt: new Date().toISOString(),
    };
    if (spec.type === 'sink') {
      await spec.handler(message);
      return { channel: args.channel, delivered: true };
    }
    const topic = spec.type === 'webhook' ? WEBHOOK_TOPIC : spec.topic;
    const maxAttempts = spec.type === 'webhook' ? spec.maxAttempts : undefined;
    const eventId = await (this.outbox as OutboxService).publish({ tenantId: message.tenantId, topic, payload: message, maxAttempts });
    return { channel: args.channel, queued: true, eventId };
  }

  /** Deliver one webhook attempt: POST, signed, under a timeout; anything but 2xx fails the attempt (the outbox retries). */
  private async post(event: OutboxEvent, signal: AbortSignal): Promise<void> {
    const message = event.payload as NotificationMessage;
    const spec = ownValue(this.options.channels, message.channel);
    if (!spec || spec.type !== 'webhook') throw new Error(`channel ${message.channel} is no longer a webhook`);
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
      signal: AbortSignal.any([signal, AbortSignal.timeout(spec.timeoutMs ?? 5000)]),
      redirect: 'manual',
    });
    await res.arrayBuffer().catch(() => undefined);
    if (res.status < 200 || res.status > 299) throw new Error(`webhook answered ${res.status}`);
  }
}

/** notification.send over the channels of the options. Webhook and outbox channels need OutboxModule. */
@Module({})
export class NotifyModule {
  static forRoot(options: NotifyModuleOptions) {
    return {
      module: NotifyModule,
      providers: [{ provide: NOTIFY_MODULE_OPTIONS, useValue: Object.assign(new NotifyModuleOptions(), options) }, NotifySkill],
    };
  }
}
