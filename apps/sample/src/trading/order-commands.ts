import { Logger } from '@nestjs/common';
import { SkillError } from '@zmodu/skills';
import { CommandDefinition, NotificationMessage, OutboxHandler } from '@zmodu/outbox';

/** order.cancel: cancels a draft or submitted order of the caller's desk; the event commits with the change. */
export const cancelOrderCommand: CommandDefinition = {
  name: 'order.cancel',
  description: 'cancel an order of your desk that is a draft or submitted',
  parameters: {
    type: 'object',
    properties: { orderId: { type: 'string', pattern: '^[0-9a-fA-F-]{36}$' }, reason: { type: 'string', minLength: 1, maxLength: 500 } },
    required: ['orderId', 'reason'],
    additionalProperties: false,
  },
  handler: async (args, { transaction, invocation }) => {
    const changed = await transaction.query(
      `UPDATE sample_orders SET status = 'cancelled' WHERE id = $1 AND tenant_id = $2 AND status IN ('draft', 'submitted') RETURNING id, symbol, qty`,
      [args.orderId, invocation.tenantId],
    );
    if (changed.length === 0) throw new SkillError('not_found', 'No open order with that id on your desk.');
    return {
      topic: 'order.cancelled',
      payload: { orderId: args.orderId, reason: args.reason, by: invocation.userId, tenantId: invocation.tenantId },
    };
  },
};

const logger = new Logger('Desk');

/** Delivery of order.cancelled events (at least once; this one only logs). */
export const orderCancelledHandler: OutboxHandler = (event) => {
  logger.log(`order ${(event.payload as { orderId: string }).orderId} cancelled (event ${event.id})`);
};

/** The desk-log channel of notification.send: an in-process sink. */
export const deskLog: NotificationMessage[] = [];
export function deskLogSink(message: NotificationMessage): void {
  deskLog.push(message);
  if (deskLog.length > 1000) deskLog.shift();
  logger.log(`[${message.tenantId}] ${message.subject ?? 'note'}: ${message.message}`);
}
