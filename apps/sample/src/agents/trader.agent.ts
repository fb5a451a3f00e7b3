import {
  AgentBudget,
  AgentMemory,
  AgentSpec,
  lastObservation,
  ModelProvider,
  ModelRequest,
  ScriptedModelProvider,
  ScriptedReply,
} from '@zmodu/agent';
import { MEMORY_FENCE_CLOSE, MEMORY_FENCE_OPEN } from '@zmodu/memory';

const goalOf = (req: ModelRequest) => (req.messages[0]?.role === 'user' ? req.messages[0].content : '');
/** "Remember: <note>" (or "remember that ...") asks the trader to remember a note; "What do you remember ...?" to recall. */
const REMEMBER_GOAL = /^\s*remember\b(?:\s+that)?[\s:]+(\S[\s\S]*)$/i;
const RECALL_GOAL = /\bwhat do you (?:remember|know)\b/i;

/** The notes the runtime put in this run's system prompt (the fenced remembered-notes block of the caller's memory). */
export function promptNotes(req: ModelRequest): string[] {
  const system = req.system ?? '';
  const open = system.indexOf(MEMORY_FENCE_OPEN);
  const close = system.indexOf(MEMORY_FENCE_CLOSE, open);
  if (open < 0 || close < 0) return [];
  return system
    .slice(open + MEMORY_FENCE_OPEN.length, close)
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => String((JSON.parse(line) as { note?: unknown }).note));
}

/** The memory turns of the scripted trader (remember a note, or say what it remembers), or undefined for an order goal. */
function memoryTurn(req: ModelRequest, turn: 0 | 1): ScriptedReply | undefined {
  const remember = REMEMBER_GOAL.exec(goalOf(req));
  if (remember) {
    if (turn === 0)
      return {
        text: 'Noting that for later.',
        toolCalls: [{ name: 'memory.remember', arguments: { content: remember[1].trim(), kind: 'preference' } }],
      };
    const obs = lastObservation(req) as { id?: string; error?: string; reason?: string };
    return { text: obs?.id ? `Noted (note ${obs.id}).` : `I could not remember that: ${obs?.reason ?? obs?.error ?? 'no answer'}.` };
  }
  if (!RECALL_GOAL.test(goalOf(req))) return undefined;
  if (turn === 0)
    return {
      text: `In my prompt: ${JSON.stringify(promptNotes(req))}. Recalling your notes.`,
      toolCalls: [{ name: 'memory.recall', arguments: { query: goalOf(req).slice(0, 500) } }],
    };
  const obs = lastObservation(req) as { entries?: Array<{ note: string }>; error?: string; reason?: string };
  if (!obs?.entries) return { text: `I could not recall your notes: ${obs?.reason ?? obs?.error ?? 'no answer'}.` };
  return { text: obs.entries.length ? `I remember: ${obs.entries.map((e) => e.note).join('; ')}.` : 'I have no notes about you.' };
}

/**
 * The offline trader: a scripted model that quotes, then proposes the order with approval.submit.
 * Its policy keeps allowExecute off, so even a small order waits for a human
 * (execute_not_permitted); if proposing is refused, it falls back to drafting the order. It reads
 * quantity and ticker from the goal ("buy 10 ACME"), defaulting to 10 ACME. A goal "Remember: <note>" has it call
 * memory.remember; "What do you remember about me?" has it say the notes in its prompt and call memory.recall.
 */
export function scriptedTrader(): ScriptedModelProvider {
  const order = (req: ModelRequest) => {
    const m = /\b(buy|sell)\s+(\d{1,6})\s+([A-Za-z]{1,6})\b/i.exec(goalOf(req));
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
    (req) =>
      memoryTurn(req, 0) ?? {
        text: `Checking the price of ${order(req).symbol} first.`,
        toolCalls: [{ name: 'market.quote', arguments: { symbol: order(req).symbol } }],
      },
    (req) => {
      const remembered = memoryTurn(req, 1);
      if (remembered) return remembered;
      const price = quoted(req);
      if (price === undefined) return { text: `I could not get a price for ${order(req).symbol}, so I placed nothing.` };
      return {
        text: `${order(req).symbol} trades at ${price}. Proposing the order with that limit.`,
        toolCalls: [{ name: 'approval.submit', arguments: { action: 'order.submit', payload: { ...order(req), limitPrice: price } } }],
      };
    },
    (req) => {
      const obs = lastObservation(req) as {
        error?: string;
        reason?: string;
        verdict?: string;
        proposalId?: string;
        decision?: string;
        result?: unknown;
        decidedBy?: string;
      };
      if (obs?.error)
        return {
          text: `Proposing was refused (${obs.reason}); drafting the order for a human to submit instead.`,
          toolCalls: [{ name: 'order.draft', arguments: { ...order(req), limitPrice: quoted(req) } }],
        };
      if (obs?.verdict === 'executed') return { text: `Order submitted (proposal ${obs.proposalId}).` };
      // A worker's run waited for the human decision: this is it.
      if (obs?.decision === 'executed')
        return { text: `Approved by ${obs.decidedBy} and submitted (proposal ${obs.proposalId}): ${JSON.stringify(obs.result)}.` };
      if (obs?.decision)
        return {
          text: `The order was not placed: ${obs.decision}${obs.decidedBy ? ` by ${obs.decidedBy}` : ''}${obs.reason ? ` (${obs.reason})` : ''}.`,
        };
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

/** The trader's skills, all allowed by its guard: read and propose only (memory.remember is `propose`). */
const TRADER_SKILLS = ['market.quote', 'order.draft', 'approval.submit', 'memory.remember', 'memory.recall'];

/**
 * The trader agent: it may quote, draft and propose; its guard keeps execute off, so a human approves every order it
 * proposes. It remembers notes about its user (memory.remember, for a token with memory:write) and, given `memory`
 * (MemoryRecall), gets the caller's notes relevant to the goal in its prompt. `provider`: a real model instead of the
 * scripted one (the same guard, skills and budget).
 */
export function traderAgent(
  budget: Partial<AgentBudget> = {},
  provider: ModelProvider = scriptedTrader(),
  memory?: AgentMemory,
): AgentSpec {
  return {
    name: 'trader',
    provider,
    skills: [...TRADER_SKILLS],
    guard: { allow: [...TRADER_SKILLS], deny: [], allowExecute: false },
    systemPrompt:
      'You are a trading assistant. You may quote, draft and propose orders; a human approves them. Quote the instrument ' +
      'with market.quote first; propose an order with approval.submit (action "order.submit", payload { symbol, side, qty, ' +
      'limitPrice }); if proposing is refused, draft it with order.draft. When the user asks you to remember a preference, ' +
      'store it with memory.remember; memory.recall finds their earlier notes. Answer in one or two sentences.',
    maxSteps: 6,
    budget: { ...TRADER_BUDGET, ...budget },
    ...(memory ? { memory } : {}),
  };
}
