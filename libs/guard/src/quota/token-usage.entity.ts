import { Column, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

@Entity({ name: 'zmodu_token_usage' })
export class TokenUsageEntity {
  @PrimaryColumn({ name: 'tenant_id', type: 'text' })
  tenantId: string;

  @PrimaryColumn({ type: 'text' })
  agent: string;

  @PrimaryColumn({ type: 'text' })
  period: string;

  @Column({ type: 'bigint', default: 0 })
  tokens: string;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
