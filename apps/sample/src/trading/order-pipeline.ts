import type { AmountContext, PipelineModuleOptions } from '@zmodu/pipeline';

/**
 * The amount at stake of an order, computed by the desk from its own prices, never from the
 * proposer's numbers: a sell is worth the market price, a buy the larger of market and limit
 * (a buy can fill up to its limit). An unknown instrument has no amount: the proposal is refused.
 */
export async function orderAmount(payload: Record<string, unknown>, ctx: AmountContext): Promise<number> {
  const [row] = await ctx.query<{ price: string }>('SELECT price FROM sample_instruments WHERE tenant_id = $1 AND symbol = $2', [
    ctx.tenantId,
    payload.symbol,
  ]);
  if (!row) throw new Error(`no instrument ${String(payload.symbol)} on this desk`);
  const market = Number(row.price);
  const unit = payload.side === 'buy' ? Math.max(market, Number(payload.limitPrice)) : market;
  return Math.round(Number(payload.qty) * unit * 100) / 100;
}

/** The desk's staged actions, risk rules and approval chain for order.submit (amounts are notional, priced by orderAmount). */
export const ORDER_PIPELINE: PipelineModuleOptions = {
  actions: { 'order.submit': { amount: orderAmount } },
  proposable: ['order.submit'],
  risk: {
    thresholds: { 'order.submit': { escalateAt: 10_000 } },
    tenantLimits: { acme: 250_000, globex: 100_000, '*': 50_000 },
    velocity: { max: 30, windowMs: 60_000, per: 'user' as const },
  },
  approval: {
    // A proposal that waits for a human below the chain (the trader may not execute orders: every order of it waits), or
    // an approval.request: one approver holding approval:decide, the desk's choice (said here, so the boot has no warning).
    defaultSteps: [{ name: 'approver', permission: 'approval:decide' }],
    chains: {
      'order.submit': [
        { minAmount: 10_000, steps: [{ name: 'desk lead', permission: 'desk:lead' }] },
        { minAmount: 100_000, steps: [{ name: 'second approver', permission: 'approval:decide' }] },
      ],
    },
    expiresInMs: 24 * 60 * 60 * 1000,
  },
};
