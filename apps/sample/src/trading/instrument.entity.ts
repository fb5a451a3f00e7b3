import { Column, Entity, PrimaryGeneratedColumn, Unique } from 'typeorm';

/** A tradable instrument with the desk's (tenant's) last price. */
@Entity({ name: 'sample_instruments' })
@Unique('sample_instruments_tenant_symbol', ['tenantId', 'symbol'])
export class Instrument {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'tenant_id', type: 'text' })
  tenantId: string;

  @Column({ type: 'text' })
  symbol: string;

  @Column({ type: 'numeric', precision: 18, scale: 4 })
  price: string;

  @Column({ type: 'text' })
  currency: string;
}
