import { AgentSpec, lastObservation, ModelProvider, ModelRequest, ScriptedModelProvider } from '@zmodu/agent';

/**
 * Operations: cancels an order with order.cancel (command.execute, through the outbox; one per
 * run) and, only once that succeeded, leaves a note on the desk log (notification.send). A failed
 * call is told as a failure. The order id comes from the goal.
 */
export function opsAgent(provider?: ModelProvider): AgentSpec {
  return {
    name: 'ops',
    provider: provider ?? scriptedOps(),
    skills: ['command.execute', 'notification.send'],
    guard: { allow: ['command.execute', 'notification.send'], allowExecute: true },
    systemPrompt:
      'You run operations for the desk. Cancel an order with command.execute (command "order.cancel", args { orderId, reason }); ' +
      'only once that succeeded, note it on the desk log with notification.send (channel "desk-log"). Say plainly when a call failed.',
    maxSteps: 4,
  };
}

function scriptedOps(): ModelProvider {
  const orderId = (req: ModelRequest) => {
    const goal = req.messages[0]?.role === 'user' ? req.messages[0].content : '';
    return /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i.exec(goal)?.[0] ?? '00000000-0000-0000-0000-000000000000';
  };
  return new ScriptedModelProvider([
    (req) => ({
      text: 'Cancelling the order.',
      toolCalls: [
        {
          name: 'command.execute',
          arguments: { command: 'order.cancel', args: { orderId: orderId(req), reason: 'requested by the desk' } },
        },
      ],
    }),
    (req) => {
      // Read the observation: only a cancellation that happened is noted, and a failure is said as one.
      const obs = lastObservation(req) as { eventId?: string; replayed?: boolean; error?: string; reason?: string; message?: string };
      if (!obs?.eventId)
        return {
          text: `The order was NOT cancelled: ${obs?.reason ?? obs?.error ?? 'no answer'}${obs?.message ? ` (${obs.message})` : ''}.`,
        };
      return {
        text: `Order ${orderId(req)} cancelled (event ${obs.eventId}${obs.replayed ? ', already done earlier' : ''}); noting it on the desk log.`,
        toolCalls: [
          {
            name: 'notification.send',
            arguments: { channel: 'desk-log', subject: 'cancel', message: `order ${orderId(req)} cancelled` },
          },
        ],
      };
    },
    (req) => {
      const obs = lastObservation(req) as { delivered?: boolean; queued?: boolean; error?: string; reason?: string };
      return {
        text:
          obs?.delivered || obs?.queued
            ? 'Cancelled and noted on the desk log.'
            : `Cancelled, but the desk-log note failed: ${obs?.reason ?? obs?.error}.`,
      };
    },
  ]);
}
