import { createHmac } from 'node:crypto';

/** Sign a webhook body: `sha256=` + hex HMAC of `<timestamp>.<body>`. Receivers verify it the same way. */
export function signWebhook(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}
