import { Column, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/** One user's share of a tenant's tokens for one agent and period (fair use). */
@Entity({ name: 'zmodu_token_usage_users' })
export class TokenUserUsageEntity {
  @PrimaryColumn({ name: 'tenant_id', type: 'text' })
  tenantId: string;

  @PrimaryColumn({ type: 'text' })
  agent: string;

  @PrimaryColumn({ name: 'user_id', type: 'text' })
  userId: string;

  @PrimaryColumn({ type: 'text' })
  period: string;

  @Column({ type: 'bigint', default: 0 })
  tokens: string;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
