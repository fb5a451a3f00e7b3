import { AgentSpec, ModelProvider, ScriptedModelProvider } from '@zmodu/agent';

/**
 * The desk: may have orders executed (allowExecute, order.submit listed), and every order still
 * goes through the pipeline's pricing and risk review. Its scripted model proposes a small order,
 * one over the desk limit, and a large one.
 */
export function deskAgent(provider?: ModelProvider): AgentSpec {
  return {
    name: 'desk',
    provider: provider ?? scriptedDesk(),
    skills: ['market.quote', 'approval.submit'],
    // order.submit is listed so that this agent may have it executed (the pipeline still reviews every order).
    guard: { allow: ['market.quote', 'approval.submit', 'order.submit'], allowExecute: true },
    systemPrompt:
      'You place orders for the desk. Every order goes through risk review: propose each one with approval.submit ' +
      '(action "order.submit", payload { symbol, side, qty, limitPrice }), all of them in one turn, then report each verdict.',
    maxSteps: 4,
  };
}

function scriptedDesk(): ModelProvider {
  return new ScriptedModelProvider([
    {
      text: 'Proposing three orders: a small one, one over the desk limit, and a large one.',
      toolCalls: [
        {
          name: 'approval.submit',
          arguments: { action: 'order.submit', payload: { symbol: 'ACME', side: 'buy', qty: 10, limitPrice: 101.25 } },
        },
        {
          name: 'approval.submit',
          arguments: { action: 'order.submit', payload: { symbol: 'ACME', side: 'buy', qty: 5000, limitPrice: 101.25 } },
        },
        {
          name: 'approval.submit',
          arguments: { action: 'order.submit', payload: { symbol: 'GLOBEX', side: 'buy', qty: 500, limitPrice: 48.1 } },
        },
      ],
    },
    (req) => {
      const verdicts = req.messages
        .filter((m) => m.role === 'tool')
        .map((m) => (m.role === 'tool' ? (JSON.parse(m.content) as { verdict?: string; decision?: string; error?: string }) : {}))
        // A run that waited for a human is told the decision (`decision`) as its proposal's result.
        .map((o) => o.verdict ?? o.decision ?? o.error);
      return { text: `Orders placed: ${verdicts.join(', ')}.` };
    },
  ]);
}
