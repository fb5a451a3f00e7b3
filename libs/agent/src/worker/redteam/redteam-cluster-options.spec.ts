import { DataSource } from 'typeorm';
import { InvalidWorkerOptionsException } from '../../exceptions/invalid-worker-options.exception';
import { serverConnection } from '../goal-queue.provider';
import { resolveQueueOptions } from '../resolve-queue-options';

describe('red team cluster: queue options and the server pg-boss connects to', () => {
  it('RT-C4 a DataSource with read replicas: pg-boss goes to the primary, not to a default localhost', () => {
    const ds = {
      options: {
        type: 'postgres',
        replication: {
          master: { host: 'primary.db', port: 5433, database: 'app', username: 'u', password: 'p' },
          slaves: [{ host: 'replica.db', port: 5433, database: 'app', username: 'u', password: 'p' }],
        },
      },
    } as unknown as DataSource;
    expect(serverConnection(ds)).toEqual({ host: 'primary.db', port: 5433, database: 'app', user: 'u', password: 'p' });
    const byUrl = { options: { type: 'postgres', replication: { master: { url: 'postgres://u@primary.db/app' }, slaves: [] } } };
    expect(serverConnection(byUrl as unknown as DataSource)).toEqual({ connectionString: 'postgres://u@primary.db/app' });
  });

  it.each([
    ['name', 'goals"; NOTIFY other; --'],
    ['name', 'goals posted'],
    ['name', '1goals'],
    ['name', 'x'.repeat(51)],
    ['schema', 'public; DROP SCHEMA app'],
    ['schema', 'Boss"'],
    ['pollingIntervalSeconds', Number.POSITIVE_INFINITY],
    ['pollingIntervalSeconds', Number.NaN],
    ['pollingIntervalSeconds', 86_400],
  ] as const)('RT-C5 refuses queue.%s = %p at boot, naming the field (no SQL or LISTEN built from it)', (field, value) => {
    let error: unknown;
    try {
      resolveQueueOptions({ driver: 'pg-boss', [field]: value });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidWorkerOptionsException);
    expect((error as InvalidWorkerOptionsException).field).toBe(`queue.${field}`);
  });
});
