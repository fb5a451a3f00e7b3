import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { embeddedDataSourceOptions, openEmbeddedDatabase } from '@zmodu/db';
import { ProposalPipeline } from '@zmodu/pipeline';
import request, { Response } from 'supertest';
import { DataSource } from 'typeorm';
import { AppModule } from '../../apps/sample/src/app.module';
import { mintToken } from '../../apps/sample/src/auth/dev-token';
import { CHAOS_SECRET as SECRET } from '../support/sample-process';

const PROPOSAL_ID = /Proposal ([0-9a-f-]{36})/;
const DRAFT_ID = /^Drafted order ([0-9a-f-]{36})/;

/** Fill the file system of `file` until a write fails with ENOSPC (1 MiB chunks, then 4 KiB ones); the file is kept. */
function fillDisk(file: string): void {
  const fd = openSync(file, 'w');
  try {
    for (const size of [1 << 20, 4096]) {
      const chunk = Buffer.alloc(size, 1);
      for (;;) {
        try {
          writeSync(fd, chunk);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOSPC') break;
          throw err;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
}

/** The sample on the embedded database in `dataDir` (opened here; closed with the app). */
async function sampleOn(dataDir: string): Promise<INestApplication> {
  const db = await openEmbeddedDatabase({ dataDir });
  const moduleRef = await Test.createTestingModule({
    imports: [AppModule.register({ dataSource: async () => embeddedDataSourceOptions(db), jwtSecret: SECRET })],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return app;
}

/** What must survive: every proposal with its status and decisions, the orders, the ballast rows. */
async function committed(ds: DataSource) {
  const proposals = await ds.query<Array<{ id: string; status: string; approvals: number; decisions: number; orders: number }>>(
    `SELECT p.id, p.status, p.approvals,
            (SELECT count(*)::int FROM zmodu_approval_decisions d WHERE d.proposal_id = p.id) AS decisions,
            (SELECT count(*)::int FROM sample_orders o WHERE o.tenant_id = p.tenant_id AND o.status = 'submitted'
               AND o.qty = (p.payload->>'qty')::int) AS orders
       FROM zmodu_proposals p WHERE p.tenant_id = 'acme' ORDER BY p.id`,
  );
  const [{ orders }] = await ds.query<Array<{ orders: number }>>(
    `SELECT count(*)::int AS orders FROM sample_orders WHERE tenant_id = 'acme' AND status = 'submitted'`,
  );
  const [{ ballast }] = await ds.query<Array<{ ballast: number }>>('SELECT count(*)::int AS ballast FROM chaos_ballast');
  return { proposals, orders, ballast };
}

/**
 * Nothing half-done: an executed proposal has its decision and exactly one order; an approved one (its decision
 * committed, its execution refused: the pipeline's recovery runs it later) its decision and no order; one not decided
 * has neither.
 */
function expectWhole(proposals: Awaited<ReturnType<typeof committed>>['proposals']): void {
  for (const p of proposals) {
    if (p.status === 'executed') expect([p.id, p.decisions, p.approvals, p.orders]).toEqual([p.id, 1, 1, 1]);
    else if (p.status === 'approved') expect([p.id, p.decisions, p.approvals, p.orders]).toEqual([p.id, 1, 1, 0]);
    else expect([p.id, ['pending', 'refused'].includes(p.status), p.decisions, p.approvals, p.orders]).toEqual([p.id, true, 0, 0, 0]);
  }
}

/** An answer of a refused write is a 503 with Retry-After (never a 500); else the write's own success. */
function expectToldAsWhatItIs(res: Response, ok: number[]): 'done' | 'refused' {
  if (res.status === 503) {
    expect([res.status, res.headers['retry-after']]).toEqual([503, '5']);
    return 'refused';
  }
  if (!ok.includes(res.status)) expect([res.status, res.text]).toEqual([ok[0], 'a success']);
  return 'done';
}

/**
 * The chaos suite: the sample on PGlite whose data folder is on a 96 MiB tmpfs, which the test fills up while agents
 * run and approvers decide. PGlite on ENOSPC: a write that must extend a table fails with SQLSTATE 53100 and the session
 * goes on; a write of the WAL that needs a new segment is a PANIC, which aborts PGlite's WebAssembly, and reopening the
 * folder aborts the same way until there is space again. Every refused write is a 503 with Retry-After, nothing
 * refused is half-written, what was committed stays, and once the filler is deleted the same process serves writes
 * again; the app reopened on the folder afterwards finds everything.
 */
describe('chaos: the embedded database (PGlite) on a full disk', () => {
  let mnt: string;
  let mounted = false;
  let app: INestApplication | undefined;

  beforeAll(() => {
    mnt = mkdtempSync(join(tmpdir(), 'zmodu-disk-full-'));
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=96m', 'tmpfs', mnt], { stdio: 'pipe' });
    } catch (err) {
      rmSync(mnt, { recursive: true, force: true });
      throw new Error(
        `This spec needs a small tmpfs for PGlite's data folder (mount -t tmpfs, as root with CAP_SYS_ADMIN) and could ` +
          `not mount one on ${mnt}: ${String((err as { stderr?: unknown }).stderr ?? err).trim()}`,
      );
    }
    mounted = true;
  });

  afterAll(async () => {
    try {
      // Bounded: a wedged database must not keep the tmpfs mounted (the hook would time out before unmounting it).
      const closed = app?.close().catch(() => undefined);
      await Promise.race([closed, new Promise((r) => setTimeout(r, 20_000).unref())]);
    } finally {
      if (mounted) execFileSync('umount', ['-l', mnt]);
      rmSync(mnt, { recursive: true, force: true });
    }
  });

  it('refuses writes as 503s while the disk is full, half-does nothing, keeps what was committed, and serves again once there is space', async () => {
    const dataDir = join(mnt, 'pglite');
    const filler = join(mnt, 'filler');
    mkdirSync(dataDir);
    app = await sampleOn(dataDir);
    const server = app.getHttpServer();
    const ds = app.get(DataSource);
    const pipeline = app.get(ProposalPipeline);
    const lead = `Bearer ${mintToken(SECRET, { tenant: 'acme', user: 'lee', permissions: ['approval:decide', 'desk:lead'] })}`;
    const admin = `Bearer ${mintToken(SECRET, { tenant: 'acme', user: 'ada', permissions: ['admin:audit'] })}`;
    // A trader of its own for each run and proposal: the desk's velocity rule allows 30 proposals a minute per user.
    const runTrader = (qty: number) =>
      request(server)
        .post('/agents/trader/runs')
        .set('Authorization', `Bearer ${mintToken(SECRET, { tenant: 'acme', user: `trader-${qty}` })}`)
        .send({ goal: `buy ${qty} ACME` })
        .timeout({ deadline: 30_000 });
    const approve = (id: string) =>
      request(server)
        .post(`/admin/approvals/${id}/approve`)
        .set('Authorization', lead)
        .send({ reason: 'chaos', version: 1, step: 0 })
        .timeout({ deadline: 30_000 });
    const propose = async (qty: number) =>
      (
        await pipeline.submit(
          { tenantId: 'acme', userId: `trader-${qty}`, permissions: ['order:submit'], agent: 'desk' },
          { action: 'order.submit', payload: { symbol: 'ACME', side: 'buy', qty, limitPrice: 48.1 } },
        )
      ).proposalId as string;
    /** Proposals and drafted orders an agent run said it made: each must be stored. */
    const claimed = new Set<string>();
    const drafts = new Set<string>();
    const noteRun = (res: Response) => {
      const told = expectToldAsWhatItIs(res, [200]);
      if (told === 'done') {
        const id = PROPOSAL_ID.exec(String(res.body.answer))?.[1];
        const draft = DRAFT_ID.exec(String(res.body.answer))?.[1];
        if (id) claimed.add(id);
        else if (draft) drafts.add(draft);
        else expect(res.body.answer).toMatch(/^(Could not|Proposing was refused|I could not)/);
      }
      return told;
    };

    // Committed before the disk fills: two executed orders, a pending proposal of the trader, 20,000 ballast rows.
    for (const qty of [501, 502]) expect((await approve(await propose(qty))).status).toBe(200);
    expect(noteRun(await runTrader(503))).toBe('done');
    await ds.query(
      "CREATE TABLE chaos_ballast (id int PRIMARY KEY, v text NOT NULL); INSERT INTO chaos_ballast SELECT g, repeat('y', 500) FROM generate_series(1, 20000) g; CHECKPOINT",
    );
    const pending: string[] = [];
    for (let i = 0; i < 40; i++) pending.push(await propose(600 + i));
    const before = await committed(ds);
    expect(before.orders).toBe(2);
    expectWhole(before.proposals);

    fillDisk(filler);
    // 1. Writes that must extend a table fail with 53100 (PGlite's session goes on): agent runs and approvals until
    // both have been refused a few times. What fits in pages already there still commits, whole.
    let refusedApprovals = 0;
    let refusedRuns = 0;
    for (let i = 0; i < pending.length && (refusedApprovals < 3 || refusedRuns < 3); i++) {
      if (expectToldAsWhatItIs(await approve(pending[i]), [200]) === 'refused') refusedApprovals++;
      const run = await runTrader(700 + i);
      if (noteRun(run) === 'refused' || !PROPOSAL_ID.test(String(run.body.answer))) refusedRuns++;
    }
    expect(refusedApprovals).toBeGreaterThanOrEqual(3);
    expect(refusedRuns).toBeGreaterThanOrEqual(3);
    expectWhole((await committed(ds)).proposals);
    // Readiness stays 200 here: reads are served (a write probe would spend the WAL space whose lack aborts PGlite).
    expect((await request(server).get('/health/ready')).status).toBe(200);

    // 2. A write of the WAL past its segments: PGlite PANICs and aborts. The bulk delete is refused as a full disk
    // (53100, not "out of memory"), and while the disk stays full the folder cannot be reopened: readiness and every
    // database-backed endpoint answer 503 with Retry-After; liveness stays 200 (the process is fine).
    let bulk: unknown;
    for (let i = 0; i < 4 && !bulk; i++)
      bulk = await ds.query(`CHECKPOINT; DELETE FROM chaos_ballast WHERE id % 4 = ${i}`).then(
        () => undefined,
        (err: unknown) => err,
      );
    expect((bulk as { driverError?: { code?: string } } | undefined)?.driverError?.code).toBe('53100');
    const ready = await request(server).get('/health/ready');
    expect([ready.status, ready.headers['retry-after']]).toEqual([503, '5']);
    expect((await request(server).get('/health')).status).toBe(200);
    expectToldAsWhatItIs(await request(server).get('/admin/approvals').set('Authorization', lead), [200]);
    expectToldAsWhatItIs(await approve(pending[pending.length - 1]), [200]);
    noteRun(await runTrader(800));

    // 3. Space again: the same process (no restart of its own) is ready and takes writes within seconds.
    rmSync(filler);
    let status = 0;
    const freed = Date.now();
    while (status !== 200 && Date.now() - freed < 20_000) {
      status = (await request(server).get('/health/ready')).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 250));
    }
    expect(status).toBe(200);
    const after = await runTrader(801);
    expect(noteRun(after)).toBe('done');
    expect(after.body.answer).toMatch(PROPOSAL_ID);
    for (const id of pending) if ((await pipeline.get('acme', id)).status === 'pending') expect((await approve(id)).status).toBe(200);
    await pipeline.recover(); // what was approved while its execution was refused
    const verify = await request(server).get('/admin/audit/verify').set('Authorization', admin);
    expect([verify.status, verify.body.ok]).toEqual([200, true]);

    // Nothing committed lost, nothing half-done: the refused bulk delete left every ballast row; every proposal an
    // agent said it made is there; every executed proposal has its one decision and its one order.
    const now = await committed(ds);
    expect(now.ballast).toBe(20_000);
    const ids = new Set(now.proposals.map((p) => p.id));
    for (const p of before.proposals) expect([p.id, ids.has(p.id)]).toEqual([p.id, true]);
    for (const id of claimed) expect([id, ids.has(id)]).toEqual([id, true]);
    for (const id of drafts)
      expect([id, await ds.query(`SELECT status FROM sample_orders WHERE id = $1`, [id])]).toEqual([id, [{ status: 'draft' }]]);
    for (const id of pending) expect([id, now.proposals.find((p) => p.id === id)?.status]).toEqual([id, 'executed']);
    expectWhole(now.proposals);
    expect(now.orders).toBe(now.proposals.filter((p) => p.status === 'executed').length);

    // 4. The app restarted on the folder after the episode opens it and finds exactly that.
    await app.close();
    app = undefined;
    app = await sampleOn(dataDir);
    expect(await committed(app.get(DataSource))).toEqual(now);
  }, 120_000);
});
