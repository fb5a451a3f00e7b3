import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

@Entity({ name: 'zmodu_audit_log' })
@Index('zmodu_audit_log_run_idx', ['runId'])
@Index('zmodu_audit_log_tenant_at_idx', ['tenantId', 'at'])
export class AuditLogEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'run_id', type: 'text' })
  runId: string;

  @Column({ type: 'text', nullable: true })
  agent: string | null;

  @Column({ name: 'tenant_id', type: 'text', nullable: true })
  tenantId: string | null;

  @Column({ name: 'user_id', type: 'text', nullable: true })
  userId: string | null;

  @Column({ type: 'text' })
  skill: string;

  @Column({ type: 'text' })
  action: string;

  @Column({ type: 'text' })
  decision: string;

  @Column({ type: 'text', nullable: true })
  cause: string | null;

  @Column({ type: 'text' })
  outcome: string;

  @Column({ name: 'duration_ms', type: 'integer' })
  durationMs: number;

  @Column({ type: 'integer' })
  tokens: number;

  @CreateDateColumn({ type: 'timestamptz' })
  at: Date;

  @Column({ name: 'proposal_id', type: 'text', nullable: true })
  proposalId: string | null;

  @Column({ type: 'jsonb', nullable: true })
  approvers: string[] | null;

  /** The call's arguments as audit text (canonical JSON, redacted; see auditPayloadText); null when none were kept. */
  @Column({ type: 'text', nullable: true })
  args: string | null;

  /** The call's value or error body as audit text, like `args`. */
  @Column({ type: 'text', nullable: true })
  result: string | null;

  /** Position in the tenant's hash chain (1, 2, ...); null for rows written before the chain (migration 1764520000000). */
  @Column({ type: 'bigint', nullable: true })
  seq: string | null;

  /** The hash of the previous entry of the tenant's chain (64 zeros for the first). */
  @Column({ name: 'prev_hash', type: 'text', nullable: true })
  prevHash: string | null;

  /** SHA-256 (hex) of the canonical JSON of this entry's fields, seq and prev_hash (see audit-chain.ts). */
  @Column({ type: 'text', nullable: true })
  hash: string | null;
}
