/** What notification.send delivers: the body of a webhook, the argument of a sink, the payload of an outbox event. */
export interface NotificationMessage {
  readonly channel: string;
  readonly tenantId: string | null;
  readonly subject: string | null;
  readonly message: string;
  readonly data: unknown;
  readonly runId: string;
  readonly sentAt: string;
}

/** A channel notification.send may use: a signed webhook, an in-process sink, or an outbox event of a topic. */
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

/** The arguments of notification.send. */
export interface SendNotificationArgs {
  readonly channel: string;
  readonly subject?: string;
  readonly message: string;
  readonly data?: unknown;
}
