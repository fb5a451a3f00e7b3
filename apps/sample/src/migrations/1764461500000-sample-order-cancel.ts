import { MigrationInterface, QueryRunner } from 'typeorm';

/** Orders can be cancelled (through the order.cancel command). */
export class SampleOrderCancel1764461500000 implements MigrationInterface {
  name = 'SampleOrderCancel1764461500000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sample_orders DROP CONSTRAINT IF EXISTS sample_orders_status_check`);
    await q.query(
      `ALTER TABLE sample_orders ADD CONSTRAINT sample_orders_status_check CHECK (status IN ('draft', 'submitted', 'cancelled'))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sample_orders DROP CONSTRAINT IF EXISTS sample_orders_status_check`);
    await q.query(`ALTER TABLE sample_orders ADD CONSTRAINT sample_orders_status_check CHECK (status IN ('draft', 'submitted'))`);
  }
}
