import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

@Entity({ name: 'zmodu_proposals' })
@Index('zmodu_proposals_tenant_status_idx', ['tenantId', 'status', 'createdAt'])
export class ProposalEntity {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Column({ name: 'tenant_id', type: 'text' })
  tenantId: string;

  @Column({ type: 'text' })
  action: string;

  @Column({ type: 'jsonb' })
  payload: unknown;

  @Column({ type: 'numeric', nullable: true })
  amount: string | null;

  @Column({ type: 'text' })
  proposer: string;

  @Column({ type: 'text' })
  status: string;

  @Column({ type: 'text' })
  verdict: string;

  @Column({ type: 'text', nullable: true })
  reason: string | null;

  @Column({ type: 'jsonb' })
  steps: unknown;

  @Column({ type: 'integer', default: 0 })
  approvals: number;

  @Column({ type: 'integer', default: 1 })
  version: number;

  @Column({ type: 'jsonb', default: () => "'[]'" })
  permissions: string[];

  @Column({ type: 'text', nullable: true })
  agent: string | null;

  @Column({ name: 'run_id', type: 'text', nullable: true })
  runId: string | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt: Date | null;

  @Column({ name: 'executed_at', type: 'timestamptz', nullable: true })
  executedAt: Date | null;

  @Column({ type: 'jsonb', nullable: true })
  result: unknown;
}
