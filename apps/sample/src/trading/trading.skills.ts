import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { entityManagerOf, Skill, SkillError, type SkillInvocation } from '@zmodu/skills';
import { DataSource, EntityManager } from 'typeorm';
import { PERMISSIONS } from '../auth/auth.constants';
import { Instrument } from './instrument.entity';
import { Order, OrderSide, OrderStatus } from './order.entity';

const ORDER_PARAMETERS = {
  type: 'object',
  properties: {
    symbol: { type: 'string', pattern: '^[A-Z]{1,6}$', description: 'Ticker, e.g. ACME' },
    side: { type: 'string', enum: ['buy', 'sell'] },
    qty: { type: 'integer', minimum: 1, maximum: 1_000_000 },
    limitPrice: { type: 'number', minimum: 0.0001, maximum: 1_000_000, description: 'Limit price (stored with 4 decimals)' },
  },
  required: ['symbol', 'side', 'qty', 'limitPrice'],
  additionalProperties: false,
} as const;

interface OrderArgs {
  symbol: string;
  side: OrderSide;
  qty: number;
  limitPrice: number;
}

/** The trading desk's skills. Every query is scoped to the caller's tenant from the context. */
@Injectable()
export class TradingSkills {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  @Skill({
    name: 'market.quote',
    action: 'read',
    description: 'Last price of an instrument on your desk.',
    requiredPermission: PERMISSIONS.marketRead,
    parameters: {
      type: 'object',
      properties: { symbol: { type: 'string', pattern: '^[A-Z]{1,6}$', description: 'Ticker, e.g. ACME' } },
      required: ['symbol'],
      additionalProperties: false,
    },
    timeoutMs: 5_000,
  })
  async quote(args: { symbol: string }, ctx: SkillInvocation) {
    const instrument = await this.db.getRepository(Instrument).findOneBy({ tenantId: ctx.tenantId, symbol: args.symbol });
    if (!instrument) throw new SkillError('unknown_symbol', `No instrument ${args.symbol} on this desk.`);
    return { symbol: instrument.symbol, price: Number(instrument.price), currency: instrument.currency };
  }

  @Skill({
    name: 'order.draft',
    action: 'propose',
    description: 'Draft an order for a human to review. Nothing is sent to the market.',
    requiredPermission: PERMISSIONS.orderDraft,
    parameters: ORDER_PARAMETERS,
    timeoutMs: 5_000,
  })
  draft(args: OrderArgs, ctx: SkillInvocation) {
    return this.place(args, ctx, 'draft');
  }

  @Skill({
    name: 'order.submit',
    action: 'execute',
    staged: true,
    description:
      'Submit an order to the market. Staged: propose it with approval.submit; the desk prices it, small orders execute, orders over the desk limit are rejected, large ones wait for a human.',
    requiredPermission: PERMISSIONS.orderSubmit,
    parameters: ORDER_PARAMETERS,
    timeoutMs: 5_000,
  })
  async submit(args: OrderArgs, ctx: SkillInvocation) {
    // Run by the pipeline only: the order is written in the transaction that marks the proposal executed.
    const staged = ctx.staged;
    if (!staged) throw new SkillError('staged_only', 'order.submit runs through the proposal pipeline.');
    const order = await saveOrder(entityManagerOf(staged.transaction), args, ctx, 'submitted');
    return { orderId: order.id, status: order.status, symbol: order.symbol, side: order.side, qty: order.qty, approvers: staged.approvers };
  }

  private async place(args: OrderArgs, ctx: SkillInvocation, status: OrderStatus) {
    return this.db.transaction(async (m) => {
      const known = await m.getRepository(Instrument).existsBy({ tenantId: ctx.tenantId, symbol: args.symbol });
      if (!known) throw new SkillError('unknown_symbol', `No instrument ${args.symbol} on this desk.`);
      const order = await saveOrder(m, args, ctx, status);
      return {
        orderId: order.id,
        status: order.status,
        symbol: order.symbol,
        side: order.side,
        qty: order.qty,
        limitPrice: args.limitPrice,
        notional: Math.round(args.qty * args.limitPrice * 100) / 100,
      };
    });
  }
}

/** An order of the caller's desk, written through `m` (the caller's transaction). */
function saveOrder(m: EntityManager, args: OrderArgs, ctx: SkillInvocation, status: OrderStatus): Promise<Order> {
  const repo = m.getRepository(Order);
  return repo.save(
    repo.create({
      tenantId: ctx.tenantId,
      userId: ctx.userId ?? 'unknown',
      symbol: args.symbol,
      side: args.side,
      qty: args.qty,
      limitPrice: String(args.limitPrice),
      status,
      runId: ctx.runId,
    }),
  );
}
