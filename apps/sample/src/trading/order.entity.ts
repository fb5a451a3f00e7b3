import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

export type OrderStatus = 'draft' | 'submitted';
export type OrderSide = 'buy' | 'sell';

@Entity({ name: 'sample_orders' })
@Index('sample_orders_tenant_idx', ['tenantId', 'createdAt'])
export class Order {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'tenant_id', type: 'text' })
  tenantId: string;

  @Column({ name: 'user_id', type: 'text' })
  userId: string;

  @Column({ type: 'text' })
  symbol: string;

  @Column({ type: 'text' })
  side: OrderSide;

  @Column({ type: 'integer' })
  qty: number;

  @Column({ name: 'limit_price', type: 'numeric', precision: 18, scale: 4 })
  limitPrice: string;

  @Column({ type: 'text' })
  status: OrderStatus;

  @Column({ name: 'run_id', type: 'text' })
  runId: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
