import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** Audit entries the store refused on their own (poisoned rows), kept as escaped JSON text. */
@Entity({ name: 'zmodu_audit_dead_letters' })
export class AuditDeadLetterEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  /** JSON.stringify of the entry: NUL and lone surrogates are escaped, so any entry fits. */
  @Column({ type: 'text' })
  entry: string;

  @Column({ type: 'text' })
  error: string;

  /** When it was set aside. */
  @Column({ type: 'timestamptz' })
  at: Date;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
