import { Column, Entity, Index, PrimaryGeneratedColumn, Unique } from 'typeorm';

/**
 * Who decided which step of a proposal, on which version, when and why (and an approver's edit).
 * One decision per version; one person decides at most once per proposal.
 */
@Entity({ name: 'zmodu_approval_decisions' })
@Index('zmodu_approval_decisions_version', ['proposalId', 'version'], { unique: true })
@Unique('zmodu_approval_decisions_person', ['proposalId', 'decidedBy'])
export class ApprovalDecisionEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'proposal_id', type: 'uuid' })
  proposalId: string;

  @Column({ type: 'integer' })
  step: number;

  @Column({ name: 'decided_by', type: 'text' })
  decidedBy: string;

  @Column({ type: 'text' })
  decision: string;

  @Column({ type: 'text' })
  reason: string;

  @Column({ type: 'timestamptz' })
  at: Date;

  @Column({ type: 'integer', default: 0 })
  version: number;

  @Column({ type: 'jsonb', nullable: true })
  edit: unknown;
}
