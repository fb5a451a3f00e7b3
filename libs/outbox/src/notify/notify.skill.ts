import { Inject, Injectable, OnModuleInit, Optional } from '@nestjs/common';
import { ownValue } from '@zmodu/core';
import { defineSkill, SkillError, SkillInvocation, SkillRegistry } from '@zmodu/skills';
import { ChannelNeedsOutboxException } from '../exceptions/channel-needs-outbox.exception';
import { OutboxRelay } from '../outbox-relay';
import { OutboxService } from '../outbox.service';
import { NOTIFY_OPTIONS, WEBHOOK_TOPIC } from './notify.constants';
import { NotifyModuleOptions } from './notify.options';
import { NotificationMessage, SendNotificationArgs } from './notify.types';

/** notification.send (propose): a message to a named channel (webhook, in-process sink, or outbox event). */
@Injectable()
export class NotifySkill implements OnModuleInit {
  constructor(
    @Inject(NOTIFY_OPTIONS) private readonly options: NotifyModuleOptions,
    private readonly registry: SkillRegistry,
    @Optional() private readonly outbox?: OutboxService,
    @Optional() private readonly relay?: OutboxRelay,
  ) {
    for (const [name, spec] of Object.entries(options.channels))
      if (spec.type !== 'sink' && (!outbox || !relay)) throw new ChannelNeedsOutboxException(name);
  }

  onModuleInit(): void {
    const names = Object.keys(this.options.channels);
    this.registry.register(
      defineSkill({
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
        } as const,
        handler: (args, ctx) => this.send(args, ctx),
      }),
    );
  }

  async send(args: SendNotificationArgs, ctx: SkillInvocation) {
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
}
