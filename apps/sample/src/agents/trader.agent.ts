import { AgentBudget, AgentSpec, lastObservation, ModelProvider, ModelRequest, ScriptedModelProvider } from '@zmodu/agent';

/**
 * The offline trader: a scripted model that quotes, then proposes the order with approval.submit.
 * Its policy keeps allowExecute off, so even a small order waits for a human
 * (execute_not_permitted); if proposing is refused, it falls back to drafting the order. It reads
 * quantity and ticker from the goal ("buy 10 ACME"), defaulting to 10 ACME.
 */
export function scriptedTrader(): ScriptedModelProvider {
  const order = (req: ModelRequest) => {
    const goal = req.messages[0]?.role === 'user' ? req.messages[0].content : '';
    const m = /\b(buy|sell)\s+(\d{1,6})\s+([A-Za-z]{1,6})\b/i.exec(goal);
    return {
      side: (m?.[1]?.toLowerCase() ?? 'buy') as 'buy' | 'sell',
      qty: m ? Number(m[2]) : 10,
      symbol: (m?.[3] ?? 'ACME').toUpperCase(),
    };
  };
  const quoted = (req: ModelRequest): number | undefined => {
    for (const msg of req.messages) {
      if (msg.role !== 'tool' || msg.name !== 'market.quote') continue;
      const value = JSON.parse(msg.content) as { symbol?: string; price?: number };
      if (value.symbol === order(req).symbol) return value.price;
    }
    return undefined;
  };
  return new ScriptedModelProvider([
    (req) => ({
      text: `Checking the price of ${order(req).symbol} first.`,
      toolCalls: [{ name: 'market.quote', arguments: { symbol: order(req).symbol } }],
    }),
    (req) => {
      const price = quoted(req);
      if (price === undefined) return { text: `I could not get a price for ${order(req).symbol}, so I placed nothing.` };
      return {
        text: `${order(req).symbol} trades at ${price}. Proposing the order with that limit.`,
        toolCalls: [{ name: 'approval.submit', arguments: { action: 'order.submit', payload: { ...order(req), limitPrice: price } } }],
      };
    },
    (req) => {
      const obs = lastObservation(req) as { error?: string; reason?: string; verdict?: string; proposalId?: string };
      if (obs?.error)
        return {
          text: `Proposing was refused (${obs.reason}); drafting the order for a human to submit instead.`,
          toolCalls: [{ name: 'order.draft', arguments: { ...order(req), limitPrice: quoted(req) } }],
        };
      if (obs?.verdict === 'executed') return { text: `Order submitted (proposal ${obs.proposalId}).` };
      return { text: `The order is proposed (${obs?.verdict}${obs?.reason ? `: ${obs.reason}` : ''}).` };
    },
    (req) => {
      const obs = lastObservation(req) as { orderId?: string; error?: string; notional?: number };
      return {
        text: obs?.orderId
          ? `Drafted order ${obs.orderId} (${order(req).side} ${order(req).qty} ${order(req).symbol}, notional ${obs.notional}). A human with order:submit rights must submit it.`
          : `Could not draft the order: ${JSON.stringify(obs)}`,
      };
    },
  ]);
}

/**
 * The trader's budget. Fair use: one user may spend at most a fifth of the tenant's daily tokens
 * with the trader, so one greedy caller cannot stop the rest of the desk (the run stops with
 * `budget_exhausted` and `budget: 'user'`; the others keep running until the tenant's budget is spent).
 */
export const TRADER_BUDGET: AgentBudget = { tokensPerRun: 20_000, tokensPerPeriod: 1_000_000, userShare: 0.2 };

/**
 * The trader agent: it may quote, draft and propose; its guard keeps execute off, so a human approves every order it
 * proposes. `provider`: a real model instead of the scripted one (the same guard, skills and budget).
 */
export function traderAgent(budget: Partial<AgentBudget> = {}, provider: ModelProvider = scriptedTrader()): AgentSpec {
  return {
    name: 'trader',
    provider,
    skills: ['market.quote', 'order.draft', 'approval.submit'],
    guard: { allow: ['market.quote', 'order.draft', 'approval.submit'], deny: [], allowExecute: false },
    systemPrompt:
      'You are a trading assistant. You may quote, draft and propose orders; a human approves them. Quote the instrument ' +
      'with market.quote first; propose an order with approval.submit (action "order.submit", payload { symbol, side, qty, ' +
      'limitPrice }); if proposing is refused, draft it with order.draft. Answer in one or two sentences.',
    maxSteps: 6,
    budget: { ...TRADER_BUDGET, ...budget },
  };
}
