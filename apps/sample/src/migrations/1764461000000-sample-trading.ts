import { MigrationInterface, QueryRunner } from 'typeorm';

export class SampleTrading1764461000000 implements MigrationInterface {
  name = 'SampleTrading1764461000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE IF NOT EXISTS sample_instruments (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id text NOT NULL,
      symbol text NOT NULL,
      price numeric(18,4) NOT NULL,
      currency text NOT NULL,
      CONSTRAINT sample_instruments_tenant_symbol UNIQUE (tenant_id, symbol)
    )`);
    await q.query(`CREATE TABLE IF NOT EXISTS sample_orders (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id text NOT NULL,
      user_id text NOT NULL,
      symbol text NOT NULL,
      side text NOT NULL CHECK (side IN ('buy', 'sell')),
      qty integer NOT NULL CHECK (qty > 0),
      limit_price numeric(18,4) NOT NULL CHECK (limit_price > 0),
      status text NOT NULL CHECK (status IN ('draft', 'submitted')),
      run_id text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query(`CREATE INDEX IF NOT EXISTS sample_orders_tenant_idx ON sample_orders (tenant_id, created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS sample_orders`);
    await q.query(`DROP TABLE IF EXISTS sample_instruments`);
  }
}
