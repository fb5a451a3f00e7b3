import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A tenant's value of one declared config key (table zmodu_admin_config, made by ZMODU_ADMIN_MIGRATIONS). */
@Entity({ name: 'zmodu_admin_config' })
export class AdminConfigEntity {
  @PrimaryColumn({ name: 'tenant_id', type: 'text' })
  tenantId: string;

  @PrimaryColumn({ type: 'text' })
  key: string;

  @Column({ type: 'jsonb' })
  value: unknown;

  /** Writes so far: 1 after the first; a write conditioned on a version lands only on that one. */
  @Column({ type: 'integer' })
  version: number;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  @Column({ name: 'updated_by', type: 'text', nullable: true })
  updatedBy: string | null;
}
