import { Column, Entity, PrimaryGeneratedColumn, Unique } from 'typeorm';

/** Who decided which step of a proposal, when and why. One person decides at most one step of a proposal. */
@Entity({ name: 'zmodu_approval_decisions' })
@Unique('zmodu_approval_decisions_step', ['proposalId', 'step'])
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
