import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { SAMPLE_OPTIONS, type SampleAppOptions } from '../sample.options';

/** Two desks (tenants) with their own prices, so that isolation is visible. */
export const SEED_INSTRUMENTS: ReadonlyArray<[tenant: string, symbol: string, price: string, currency: string]> = [
  ['acme', 'ACME', '101.2500', 'USD'],
  ['acme', 'GLOBEX', '48.1000', 'USD'],
  ['acme', 'INITECH', '12.7500', 'USD'],
  ['globex', 'ACME', '99.9000', 'EUR'],
  ['globex', 'HOOLI', '310.0000', 'EUR'],
];

@Injectable()
export class TradingSeed implements OnApplicationBootstrap {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(SAMPLE_OPTIONS) private readonly options: SampleAppOptions,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.options.seed === false) return;
    await this.seed();
  }

  /** Idempotent: existing rows are kept. One statement, so all or nothing. */
  async seed(): Promise<void> {
    const values = SEED_INSTRUMENTS.map((_, i) => `($${i * 4 + 1}, $${i * 4 + 2}, $${i * 4 + 3}, $${i * 4 + 4})`).join(', ');
    await this.db.query(
      `INSERT INTO sample_instruments (tenant_id, symbol, price, currency) VALUES ${values} ON CONFLICT (tenant_id, symbol) DO NOTHING`,
      SEED_INSTRUMENTS.flat(),
    );
  }
}
