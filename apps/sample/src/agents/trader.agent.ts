import { AgentBudget, AgentSpec, lastObservation, ModelRequest, ScriptedModelProvider } from '@zmodu/agent';

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

/** The trader agent: it may quote, draft and propose; its guard keeps execute off, so a human approves every order it proposes. */
export function traderAgent(budget: Partial<AgentBudget> = {}): AgentSpec {
  return {
    name: 'trader',
    provider: scriptedTrader(),
    skills: ['market.quote', 'order.draft', 'approval.submit'],
    guard: { allow: ['market.quote', 'order.draft', 'approval.submit'], deny: [], allowExecute: false },
    systemPrompt: 'You are a trading assistant. You may quote, draft and propose orders; a human approves them.',
    maxSteps: 6,
    budget: { ...TRADER_BUDGET, ...budget },
  };
}

/** A read-only analyst: a healthy policy (read skills only), which reads the desk's orders with db.query. */
export function analystAgent(): AgentSpec {
  return {
    name: 'analyst',
    provider: new ScriptedModelProvider([
      {
        text: 'Quoting ACME and counting the desk orders by status.',
        toolCalls: [
          { name: 'market.quote', arguments: { symbol: 'ACME' } },
          {
            name: 'db.query',
            arguments: {
              sql: 'SELECT status, count(*) AS orders, sum(qty) AS quantity FROM sample_orders GROUP BY status ORDER BY status',
            },
          },
        ],
      },
      (req) => {
        const obs = lastObservation(req) as { rows?: unknown[]; error?: string; reason?: string };
        return {
          text: obs?.rows
            ? `Orders by status: ${JSON.stringify(obs.rows)}`
            : `Could not read the desk orders: ${obs?.reason ?? obs?.error ?? 'no answer'}.`,
        };
      },
    ]),
    skills: ['market.quote', 'db.query', 'entity.list'],
    guard: { allow: ['market.quote', 'db.query', 'entity.list'], allowExecute: false },
    systemPrompt: 'You are a read-only market analyst. You may quote and query the desk data.',
    maxSteps: 4,
  };
}

/**
 * The desk: may have orders executed (allowExecute, order.submit listed), and every order still
 * goes through the pipeline's pricing and risk review. Its scripted model proposes a small order,
 * one over the desk limit, and a large one.
 */
export function deskAgent(): AgentSpec {
  return {
    name: 'desk',
    provider: new ScriptedModelProvider([
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
          .map((m) => (m.role === 'tool' ? (JSON.parse(m.content) as { verdict?: string; error?: string }) : {}))
          .map((o) => o.verdict ?? o.error);
        return { text: `Orders placed: ${verdicts.join(', ')}.` };
      },
    ]),
    skills: ['market.quote', 'approval.submit'],
    // order.submit is listed so that this agent may have it executed (the pipeline still reviews every order).
    guard: { allow: ['market.quote', 'approval.submit', 'order.submit'], allowExecute: true },
    systemPrompt: 'You place orders for the desk. Every order goes through risk review.',
    maxSteps: 4,
  };
}

/**
 * Operations: cancels an order with order.cancel (command.execute, through the outbox; one per
 * run) and, only once that succeeded, leaves a note on the desk log (notification.send). A failed
 * call is told as a failure. The order id comes from the goal.
 */
export function opsAgent(): AgentSpec {
  const orderId = (req: ModelRequest) => {
    const goal = req.messages[0]?.role === 'user' ? req.messages[0].content : '';
    return /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i.exec(goal)?.[0] ?? '00000000-0000-0000-0000-000000000000';
  };
  return {
    name: 'ops',
    provider: new ScriptedModelProvider([
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
    ]),
    skills: ['command.execute', 'notification.send'],
    guard: { allow: ['command.execute', 'notification.send'], allowExecute: true },
    systemPrompt: 'You run operations for the desk.',
    maxSteps: 4,
  };
}
