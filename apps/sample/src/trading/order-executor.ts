import { ProposalExecutor } from '@zmodu/pipeline';
import { Order, OrderSide } from './order.entity';

export interface OrderPayload {
  readonly symbol: string;
  readonly side: OrderSide;
  readonly qty: number;
  readonly limitPrice: number;
}

/** Executes an approved order.submit proposal: the order is written in the transaction that marks the proposal executed. */
export const submitOrderExecutor: ProposalExecutor = async (proposal, { manager }) => {
  const p = proposal.payload as OrderPayload;
  const repo = manager.getRepository(Order);
  const order = await repo.save(
    repo.create({
      tenantId: proposal.tenantId,
      userId: proposal.proposer,
      symbol: p.symbol,
      side: p.side,
      qty: p.qty,
      limitPrice: String(p.limitPrice),
      status: 'submitted',
      runId: proposal.runId ?? proposal.id,
    }),
  );
  return { orderId: order.id, status: order.status, symbol: order.symbol, qty: order.qty };
};

/** The desk's risk rules and approval chain for order.submit (amounts are notional: qty x limit price). */
export const ORDER_PIPELINE_RULES = {
  risk: {
    thresholds: { 'order.submit': { escalateAt: 10_000 } },
    tenantLimits: { acme: 250_000, globex: 100_000, '*': 50_000 },
    velocity: { max: 30, windowMs: 60_000, per: 'user' as const },
  },
  approval: {
    chains: {
      'order.submit': [
        { minAmount: 10_000, steps: [{ name: 'desk lead', permission: 'desk:lead' }] },
        { minAmount: 100_000, steps: [{ name: 'second approver', permission: 'approval:decide' }] },
      ],
    },
    expiresInMs: 24 * 60 * 60 * 1000,
  },
};
