import { TestingModule } from '@nestjs/testing';
import { Guard } from '@zmodu/guard';
import { createSkillContext, SkillDispatcher } from '@zmodu/skills';
import { DataSource } from 'typeorm';
import { startPipelineApp } from '../../../test/support/pipeline-app';
import { createTestDatabase, TestDatabase } from '../../../test/support/test-database';
import { ApprovalForbiddenException, InvalidProposalException, ProposalConflictException, ProposalNotFoundException } from './exceptions/proposal.exceptions';
import { ProposalPipeline } from './proposal-pipeline';

const ALICE = { tenantId: 'acme', userId: 'alice' };

/** A pipeline of its own, on a database of its own, dropped after `fn`. */
async function withPipeline(options: Parameters<typeof startPipelineApp>[1], fn: (p: Awaited<ReturnType<typeof startPipelineApp>>) => Promise<void>) {
  const own = await createTestDatabase();
  const p = await startPipelineApp(own, options);
  try {
    await fn(p);
  } finally {
    await p.app.close();
    await own.drop();
  }
}
const lead = (userId = 'lee') => ({ tenantId: 'acme', userId, permissions: ['desk:lead', 'approval:decide'] });
const order = (amount: number) => ({ action: 'order.submit', payload: { symbol: 'ACME', qty: 1 }, amount });

describe('ProposalPipeline', () => {
  let db: TestDatabase;
  let app: TestingModule;
  let pipeline: ProposalPipeline;
  let ds: DataSource;
  const effects = async (id?: string) =>
    Number((await ds.query(`SELECT count(*) AS n FROM effects ${id ? 'WHERE proposal_id = $1' : ''}`, id ? [id] : []))[0].n);

  beforeAll(async () => {
    db = await createTestDatabase();
    ({ app, pipeline, ds } = await startPipelineApp(db, { risk: { ...{ thresholds: { 'order.submit': { escalateAt: 10_000, rejectAt: 900_000 } }, tenantLimits: { acme: 500_000 } } } }));
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  describe('verdicts', () => {
    it('executed: a small order runs its executor once, in the transaction that marks it executed', async () => {
      const out = await pipeline.submit(ALICE, order(500));
      expect(out).toMatchObject({ verdict: 'executed', status: 'executed', result: { submitted: true } });
      expect(await effects(out.proposalId)).toBe(1);
      expect((await pipeline.get('acme', out.proposalId)).executedAt).toBeInstanceOf(Date);
    });

    it('propose_refused: an action the pipeline policy does not list, or one without an executor', async () => {
      const out = await pipeline.submit(ALICE, { action: 'wire.transfer', payload: {}, amount: 1 });
      expect(out).toMatchObject({ verdict: 'propose_refused', status: 'refused', reason: 'denied_not_listed' });
      expect(out.proposalId).toMatch(/^[0-9a-f-]{36}$/);
    });

    it('an action named like an Object.prototype member finds no executor, even when the policy lists it', async () => {
      const names = ['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__'];
      await withPipeline({ policy: { allow: ['order.submit', ...names], allowExecute: true } }, async (p) => {
        for (const action of names) {
          const out = await p.pipeline.submit(ALICE, { action, payload: {}, amount: 1 });
          expect(out).toMatchObject({ verdict: 'propose_refused', status: 'refused', reason: `no executor is registered for '${action}'` });
        }
        expect(Number((await p.ds.query('SELECT count(*) AS n FROM effects'))[0].n)).toBe(0);
      });
    });

    it('risk_rejected: over the tenant limit, and at the reject threshold', async () => {
      expect(await pipeline.submit(ALICE, order(600_000))).toMatchObject({ verdict: 'risk_rejected', reason: expect.stringMatching(/tenant limit of 500000/) });
      expect(await pipeline.submit({ tenantId: 'globex', userId: 'gus' }, order(950_000))).toMatchObject({ verdict: 'risk_rejected', reason: expect.stringMatching(/900000/) });
    });

    it('needs_human: an escalated order waits for its chain, by amount', async () => {
      const one = await pipeline.submit(ALICE, order(20_000));
      expect(one).toMatchObject({ verdict: 'needs_human', status: 'pending', waitingFor: [{ name: 'desk lead' }] });
      const two = await pipeline.submit(ALICE, order(150_000));
      expect(two.waitingFor?.map((s) => s.name)).toEqual(['desk lead', 'second approver']);
      expect(await effects(one.proposalId)).toBe(0);
    });

    it('executor_failed: the executor throws; its writes roll back and the proposal is failed', async () => {
      await withPipeline({ policy: { allow: ['order.submit', 'flaky.thing'], allowExecute: true } }, async (p2) => {
        const out = await p2.pipeline.submit(ALICE, { action: 'flaky.thing', payload: { x: 1 }, amount: 1 });
        expect(out).toMatchObject({ verdict: 'executor_failed', status: 'failed', reason: 'downstream refused' });
        expect(Number((await p2.ds.query('SELECT count(*) AS n FROM effects'))[0].n)).toBe(0);
      });
    });

    it('execute_not_permitted: the pipeline policy does not allow execute; the proposal goes to the human queue', async () => {
      await withPipeline({ policy: { allow: ['order.submit'], allowExecute: false } }, async (p3) => {
        const out = await p3.pipeline.submit(ALICE, order(100));
        expect(out).toMatchObject({ verdict: 'execute_not_permitted', status: 'pending', reason: 'denied_execute_class', waitingFor: [{ permission: 'approval:decide' }] });
        const pending = await p3.pipeline.list('acme', { status: 'pending' });
        expect(pending.items.map((p) => p.id)).toContain(out.proposalId);
        const done = await p3.pipeline.decide(lead(), out.proposalId, 'approve', 'checked by hand');
        expect(done).toMatchObject({ verdict: 'executed', status: 'executed' });
      });
    });

    it('rejects malformed input with the field named', async () => {
      await expect(pipeline.submit(ALICE, { action: '', payload: {} })).rejects.toThrow(InvalidProposalException);
      await expect(pipeline.submit(ALICE, { action: 'order.submit', payload: {}, amount: -1 })).rejects.toMatchObject({ field: 'amount' });
      await expect(pipeline.submit({ tenantId: '', userId: 'x' }, order(1))).rejects.toMatchObject({ field: 'tenantId' });
    });
  });

  describe('approval chains', () => {
    it('executes after the last approval, with who, when and why recorded', async () => {
      const p = await pipeline.submit(ALICE, order(150_000));
      const first = await pipeline.decide(lead('lee'), p.proposalId, 'approve', 'desk limit ok');
      expect(first).toMatchObject({ verdict: 'approved_pending_next_step', status: 'pending', waitingFor: [{ name: 'second approver' }] });
      expect(await effects(p.proposalId)).toBe(0);
      const second = await pipeline.decide(lead('max'), p.proposalId, 'approve', 'second pair of eyes');
      expect(second).toMatchObject({ verdict: 'executed', status: 'executed' });
      expect(await effects(p.proposalId)).toBe(1);
      const record = await pipeline.get('acme', p.proposalId);
      expect(record.decisions.map((d) => [d.step, d.decidedBy, d.decision, d.reason])).toEqual([
        [0, 'lee', 'approve', 'desk limit ok'],
        [1, 'max', 'approve', 'second pair of eyes'],
      ]);
      expect(record.decisions.every((d) => d.at instanceof Date)).toBe(true);
    });

    it('a human rejection ends the proposal', async () => {
      const p = await pipeline.submit(ALICE, order(20_000));
      expect(await pipeline.decide(lead(), p.proposalId, 'reject', 'too risky')).toMatchObject({ verdict: 'rejected_by_human', status: 'rejected' });
      await expect(pipeline.decide(lead('max'), p.proposalId, 'approve', 'x')).rejects.toThrow(ProposalConflictException);
    });

    it('separation of duties: the proposer cannot approve; one person cannot approve two steps; the step permission is needed', async () => {
      const p = await pipeline.submit({ tenantId: 'acme', userId: 'lee' }, order(150_000));
      await expect(pipeline.decide(lead('lee'), p.proposalId, 'approve', 'mine')).rejects.toThrow(/proposer cannot decide/);
      await pipeline.decide(lead('max'), p.proposalId, 'approve', 'ok');
      await expect(pipeline.decide(lead('max'), p.proposalId, 'approve', 'again')).rejects.toThrow(/already decided a step/);
      await expect(pipeline.decide({ tenantId: 'acme', userId: 'pat', permissions: ['desk:lead'] }, p.proposalId, 'approve', 'x')).rejects.toThrow(
        ApprovalForbiddenException,
      );
      expect(await effects(p.proposalId)).toBe(0);
    });

    it('an expired proposal cannot be decided and shows as expired', async () => {
      await withPipeline({ approval: { expiresInMs: 30 } }, async (p4) => {
        const p = await p4.pipeline.submit(ALICE, order(20_000));
        await new Promise((r) => setTimeout(r, 80));
        await expect(p4.pipeline.decide(lead(), p.proposalId, 'approve', 'late')).rejects.toMatchObject({ status: 'expired' });
        expect((await p4.pipeline.get('acme', p.proposalId)).status).toBe('expired');
        expect((await p4.pipeline.list('acme', { status: 'pending' })).total).toBe(0);
      });
    });
  });

  describe('custom reviewers', () => {
    it('a RiskReviewer can escalate or reject what the rules would approve; the first refusal wins', async () => {
      const seen: string[] = [];
      const reviewers = [
        { review: (input: { payload: unknown }) => (seen.push('first'), (input.payload as { symbol?: string }).symbol === 'RISKY' ? { verdict: 'escalate' as const, reason: 'watch list' } : { verdict: 'approve' as const }) },
        { review: async (input: { payload: unknown }) => (seen.push('second'), (input.payload as { symbol?: string }).symbol === 'BANNED' ? { verdict: 'reject' as const, reason: 'sanctioned' } : { verdict: 'approve' as const }) },
      ];
      await withPipeline({ reviewers }, async (p6) => {
        expect(await p6.pipeline.submit(ALICE, { action: 'order.submit', payload: { symbol: 'RISKY' }, amount: 5 })).toMatchObject({ verdict: 'needs_human', reason: 'watch list' });
        expect(seen).toEqual(['first']);
        expect(await p6.pipeline.submit(ALICE, { action: 'order.submit', payload: { symbol: 'BANNED' }, amount: 5 })).toMatchObject({ verdict: 'risk_rejected', reason: 'sanctioned' });
        expect(await p6.pipeline.submit(ALICE, { action: 'order.submit', payload: { symbol: 'FINE' }, amount: 5 })).toMatchObject({ verdict: 'executed' });
      });
    });
  });

  describe('velocity', () => {
    it('rejects past N proposals per window per user; other users are not affected', async () => {
      await withPipeline({ risk: { velocity: { max: 3, windowMs: 60_000, per: 'user' } } }, async (p5) => {
        const verdicts = [];
        for (let i = 0; i < 4; i++) verdicts.push((await p5.pipeline.submit(ALICE, order(10))).verdict);
        expect(verdicts).toEqual(['executed', 'executed', 'executed', 'risk_rejected']);
        expect((await p5.pipeline.submit({ tenantId: 'acme', userId: 'bob' }, order(10))).verdict).toBe('executed');
        const racing = await Promise.all(Array.from({ length: 5 }, () => p5.pipeline.submit({ tenantId: 'acme', userId: 'cy' }, order(10))));
        expect(racing.filter((o) => o.verdict === 'executed')).toHaveLength(3);
      });
    });
  });

  describe('exactly once', () => {
    it('two approvers deciding the last step at the same moment execute it once', async () => {
      const p = await pipeline.submit(ALICE, order(20_000));
      const results = await Promise.allSettled([
        pipeline.decide(lead('lee'), p.proposalId, 'approve', 'ok'),
        pipeline.decide(lead('max'), p.proposalId, 'approve', 'ok'),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect(results.find((r) => r.status === 'rejected')).toMatchObject({ reason: expect.any(ProposalConflictException) });
      expect(await effects(p.proposalId)).toBe(1);
    });

    it('concurrent executions of one approved proposal run the executor once', async () => {
      const p = await pipeline.submit(ALICE, order(20_000));
      await ds.query(`UPDATE zmodu_proposals SET status = 'approved', approvals = 1 WHERE id = $1`, [p.proposalId]);
      const [a, b, recovered] = await Promise.all([pipeline.execute(p.proposalId), pipeline.execute(p.proposalId), pipeline.recover()]);
      expect(await effects(p.proposalId)).toBe(1);
      const ran = [a, b].filter((o) => o?.verdict === 'executed').length + recovered;
      expect(ran).toBe(1);
    });
  });

  describe('tenants', () => {
    it('another tenant neither sees nor decides a proposal (not found, as if it did not exist)', async () => {
      const p = await pipeline.submit(ALICE, order(20_000));
      await expect(pipeline.get('globex', p.proposalId)).rejects.toThrow(ProposalNotFoundException);
      await expect(pipeline.decide({ tenantId: 'globex', userId: 'gina', permissions: ['desk:lead'] }, p.proposalId, 'approve', 'x')).rejects.toThrow(
        ProposalNotFoundException,
      );
      expect((await pipeline.list('globex')).items.map((i) => i.id)).not.toContain(p.proposalId);
      expect(await effects(p.proposalId)).toBe(0);
    });
  });

  describe('skills', () => {
    const ctx = (permissions: string[] = []) =>
      createSkillContext({ guard: new Guard({ allow: ['approval.submit', 'approval.request'] }), tenantId: 'acme', userId: 'alice', permissions, agent: 'trader' });

    it('approval.submit routes into the pipeline and returns the verdict with the proposal id', async () => {
      const r = await app.get(SkillDispatcher).dispatch(ctx(), 'approval.submit', { action: 'order.submit', payload: { symbol: 'ACME' }, amount: 50_000 });
      expect(r.value).toMatchObject({ verdict: 'needs_human', proposalId: expect.any(String) });
    });

    it('approval.request requires approval:decide and takes subject and amount', async () => {
      const denied = await app.get(SkillDispatcher).dispatch(ctx(), 'approval.request', { subject: 'new desk', amount: 10 });
      expect(denied.error).toMatchObject({ error: 'PermissionDenied', permission: 'approval:decide' });
      const ok = await app.get(SkillDispatcher).dispatch(ctx(['approval:decide']), 'approval.request', { subject: 'new desk', amount: 10 });
      expect(ok.value).toMatchObject({ verdict: 'executed', result: { approved: true, subject: 'new desk' } });
    });
  });
});

describe('ProposalPipeline across a restart', () => {
  it('an approved proposal whose process died before execution is executed once by the next instance', async () => {
    const db = await createTestDatabase();
    try {
      const first = await startPipelineApp(db);
      const p = await first.pipeline.submit(ALICE, order(20_000));
      // The process dies right after the approval committed: simulate with the state it leaves behind.
      await first.ds.query(`UPDATE zmodu_proposals SET status = 'approved', approvals = 1 WHERE id = $1`, [p.proposalId]);
      await first.app.close();

      const second = await startPipelineApp(db);
      expect((await second.pipeline.get('acme', p.proposalId)).status).toBe('executed');
      await second.app.close();

      const third = await startPipelineApp(db);
      expect(Number((await third.ds.query('SELECT count(*) AS n FROM effects WHERE proposal_id = $1', [p.proposalId]))[0].n)).toBe(1);
      await third.app.close();
    } finally {
      await db.drop();
    }
  });

  it('a pending proposal survives a restart', async () => {
    const db = await createTestDatabase();
    try {
      const first = await startPipelineApp(db);
      const p = await first.pipeline.submit(ALICE, order(20_000));
      await first.app.close();
      const second = await startPipelineApp(db);
      expect(await second.pipeline.decide(lead(), p.proposalId, 'approve', 'after restart')).toMatchObject({ verdict: 'executed' });
      await second.app.close();
    } finally {
      await db.drop();
    }
  });
});
