import { AgentSpec, lastObservation, ModelProvider, ModelRequest, ScriptedModelProvider } from '@zmodu/agent';

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
const JUNIOR_SKILLS = ['command.execute', 'notification.send'];

/**
 * A junior trader, for the demo: its policy lists command.execute (how the ops desk cancels an order) but keeps
 * allowExecute off, so the guard refuses that call by class and the model gets {"error":"ToolDenied","reason":
 * "denied_execute_class"} as the observation; it then falls back to a propose skill, notification.send, asking the
 * desk on desk-log to cancel the order. auditPolicy reports the listed execute skill (a class blind spot) at boot:
 * deliberately, since that refusal is what the demo shows. `provider`: a real model instead of the scripted one.
 */
export function juniorAgent(provider?: ModelProvider): AgentSpec {
  return {
    name: 'junior',
    provider: provider ?? scriptedJunior(),
    skills: [...JUNIOR_SKILLS],
    guard: { allow: [...JUNIOR_SKILLS], deny: [], allowExecute: false },
    systemPrompt:
      'You assist the desk. To cancel an order, call command.execute (command "order.cancel", args { orderId, reason }). ' +
      'If a call is refused, ask the desk instead with notification.send (channel "desk-log", subject "cancel request", ' +
      'a message naming the order). Answer in one sentence.',
    maxSteps: 4,
  };
}

/** Tries command.execute first; on ToolDenied, proposes with notification.send; then says what happened. */
function scriptedJunior(): ModelProvider {
  const orderId = (req: ModelRequest) => {
    const goal = req.messages[0]?.role === 'user' ? req.messages[0].content : '';
    return UUID.exec(goal)?.[0] ?? '00000000-0000-0000-0000-000000000000';
  };
  return new ScriptedModelProvider([
    (req) => ({
      text: `Cancelling order ${orderId(req)}.`,
      toolCalls: [
        { name: 'command.execute', arguments: { command: 'order.cancel', args: { orderId: orderId(req), reason: 'requested' } } },
      ],
    }),
    (req) => {
      const obs = lastObservation(req) as { error?: string; reason?: string; eventId?: string };
      if (obs?.error !== 'ToolDenied')
        return { text: obs?.eventId ? `Order ${orderId(req)} cancelled.` : `Not cancelled: ${obs?.reason}.` };
      return {
        text: `Executing was refused (${obs.reason}); asking the desk to cancel it instead.`,
        toolCalls: [
          {
            name: 'notification.send',
            arguments: { channel: 'desk-log', subject: 'cancel request', message: `please cancel order ${orderId(req)}` },
          },
        ],
      };
    },
    (req) => {
      const obs = lastObservation(req) as { delivered?: boolean; queued?: boolean; error?: string; reason?: string };
      return {
        text:
          obs?.delivered || obs?.queued
            ? `I may not cancel orders, so I asked the desk on desk-log to cancel ${orderId(req)}.`
            : `I could not ask the desk: ${obs?.reason ?? obs?.error}.`,
      };
    },
  ]);
}
