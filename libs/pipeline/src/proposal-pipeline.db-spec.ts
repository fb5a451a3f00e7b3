import { Injectable, LoggerService } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { getDataSourceToken, TypeOrmModule } from '@nestjs/typeorm';
import { AgentAuditLog, Guard, GuardModule, ZMODU_GUARD_MIGRATIONS } from '@zmodu/guard';
import { createSkillContext, Skill, SkillDispatcher, SkillsModule } from '@zmodu/skills';
import { DataSource } from 'typeorm';
import { FixtureStagedSkills, ORDER_RULES, PipelineEffects1764461200000, startPipelineApp } from './__fixtures__/pipeline-app';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import {
  ApprovalForbiddenException,
  InvalidProposalException,
  ProposalConflictException,
  ProposalEditRefusedException,
  ProposalNotFoundException,
} from '@zmodu/pipeline';
import { PipelineModule } from './pipeline.module';
import { PipelineModuleOptions } from './pipeline.options';
import { ZMODU_PIPELINE_MIGRATIONS } from './pipeline.migrations';
import { ProposalPipeline } from './proposal-pipeline';
import { DecisionInput, PipelineOutcome } from './proposal.types';

const ALICE = { tenantId: 'acme', userId: 'alice', permissions: ['order:submit'] };
const as = (userId: string, tenantId = 'acme') => ({ tenantId, userId, permissions: ['order:submit'] });

/** A pipeline of its own, on a database of its own, dropped after `fn`. */
async function withPipeline(
  options: Parameters<typeof startPipelineApp>[1],
  fn: (p: Awaited<ReturnType<typeof startPipelineApp>>) => Promise<void>,
) {
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
/** An order of `amount` at the fixture's price of 100 a unit. */
const order = (amount: number, symbol = 'ACME') => ({ action: 'order.submit', payload: { symbol, qty: amount / 100 } });
const id = (o: PipelineOutcome) => o.proposalId as string;
const approve = (version: number, step: number, reason = 'ok', payload?: unknown): DecisionInput => ({
  decision: 'approve',
  reason,
  version,
  step,
  ...(payload ? { payload } : {}),
});
const reject = (version: number, step: number, reason = 'no'): DecisionInput => ({ decision: 'reject', reason, version, step });

describe('ProposalPipeline', () => {
  let db: TestDatabase;
  let app: TestingModule;
  let pipeline: ProposalPipeline;
  let ds: DataSource;
  const effects = async (pid?: string | null) =>
    Number((await ds.query(`SELECT count(*) AS n FROM effects ${pid ? 'WHERE proposal_id = $1' : ''}`, pid ? [pid] : []))[0].n);
  const stored = async () => Number((await ds.query('SELECT count(*) AS n FROM zmodu_proposals'))[0].n);

  beforeAll(async () => {
    db = await createTestDatabase();
    ({ app, pipeline, ds } = await startPipelineApp(db, {
      risk: { thresholds: { 'order.submit': { escalateAt: 10_000, rejectAt: 900_000 } }, tenantLimits: { acme: 500_000 } },
    }));
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  describe('verdicts', () => {
    it('executed: a small order runs its staged skill once, through the dispatcher, in the transaction that marks it executed', async () => {
      const out = await pipeline.submit(ALICE, order(500));
      expect(out).toMatchObject({ verdict: 'executed', status: 'executed', amount: 500, result: { submitted: true, qty: 5 } });
      expect(await effects(out.proposalId)).toBe(1);
      expect((await pipeline.get('acme', id(out))).executedAt).toBeInstanceOf(Date);
      const [entry] = await app.get(AgentAuditLog).query({ proposalId: id(out) });
      expect(entry).toMatchObject({
        skill: 'order.submit',
        action: 'execute',
        decision: 'allowed',
        outcome: 'ok',
        agent: 'pipeline',
        tenantId: 'acme',
        userId: 'alice',
        approvers: [],
      });
    });

    it('propose_refused: an action the pipeline does not execute, or named like an Object.prototype member; nothing is stored', async () => {
      const before = await stored();
      for (const action of ['wire.transfer', 'constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__']) {
        const out = await pipeline.submit(ALICE, { action, payload: {} });
        expect(out).toMatchObject({ verdict: 'propose_refused', status: 'refused', proposalId: null });
      }
      expect(await stored()).toBe(before);
      expect(await effects()).toBeGreaterThanOrEqual(0);
    });

    it('propose_refused: a payload that breaks the action schema is refused at submit, naming the field, before anything is stored', async () => {
      const before = await stored();
      const bad = await pipeline.submit(ALICE, { action: 'order.submit', payload: { symbol: 'ACME', qty: -3 } });
      expect(bad).toMatchObject({
        verdict: 'propose_refused',
        proposalId: null,
        field: 'payload/qty',
        reason: expect.stringContaining('qty'),
      });
      const extra = await pipeline.submit(ALICE, { action: 'order.submit', payload: { symbol: 'ACME', qty: 1, price: 0.0001 } });
      expect(extra).toMatchObject({ verdict: 'propose_refused', field: 'payload/price' });
      const notObject = await pipeline.submit(ALICE, { action: 'order.submit', payload: 'buy' });
      expect(notObject).toMatchObject({ verdict: 'propose_refused', field: 'payload' });
      for (const text of ['AC\u0000ME', '\ud800', 'x\udc00y']) {
        const unstorable = await pipeline.submit(ALICE, { action: 'flaky.thing', payload: { x: 1, note: { text } } });
        expect(unstorable).toMatchObject({
          verdict: 'propose_refused',
          field: 'payload/note/text',
          reason: expect.stringMatching(/NUL character or a lone surrogate/),
        });
      }
      expect(await pipeline.submit(ALICE, { action: 'flaky.thing', payload: { ['k\u0000']: 1 } })).toMatchObject({
        verdict: 'propose_refused',
      });
      expect(await stored()).toBe(before);
    });

    it('propose_refused: a proposer without the action permission, and an amount that cannot be computed', async () => {
      const before = await stored();
      expect(await pipeline.submit({ ...ALICE, permissions: [] }, order(500))).toMatchObject({
        verdict: 'propose_refused',
        reason: expect.stringMatching(/order:submit/),
      });
      expect(await pipeline.submit(ALICE, order(500, 'NOPE'))).toMatchObject({
        verdict: 'propose_refused',
        reason: expect.stringMatching(/could not be computed: no price for NOPE/),
      });
      expect(await stored()).toBe(before);
    });

    it('risk_rejected: over the tenant limit, and at the reject threshold', async () => {
      expect(await pipeline.submit(ALICE, order(600_000))).toMatchObject({
        verdict: 'risk_rejected',
        reason: expect.stringMatching(/tenant limit of 500000/),
      });
      expect(await pipeline.submit(as('gus', 'globex'), order(950_000))).toMatchObject({
        verdict: 'risk_rejected',
        reason: expect.stringMatching(/900000/),
      });
    });

    it('needs_human: an escalated order waits for its chain, by the amount the application computed', async () => {
      const one = await pipeline.submit(ALICE, order(20_000));
      expect(one).toMatchObject({
        verdict: 'needs_human',
        status: 'pending',
        amount: 20_000,
        version: 1,
        waitingFor: [{ name: 'desk lead' }],
      });
      const two = await pipeline.submit(ALICE, order(150_000));
      expect(two.waitingFor?.map((s) => s.name)).toEqual(['desk lead', 'second approver']);
      expect(await effects(one.proposalId)).toBe(0);
      expect(await pipeline.get('acme', id(one))).toMatchObject({
        version: 1,
        waitingStep: { index: 0, name: 'desk lead', permission: 'desk:lead' },
        permissions: ['order:submit'],
      });
    });

    it('an amount cannot be handed in: the proposal input refuses it; re-proposing a large order without one still needs a human', async () => {
      await expect(pipeline.submit(ALICE, { ...order(20_000), amount: 1 } as never)).rejects.toMatchObject({ field: 'amount' });
      for (let i = 0; i < 3; i++) expect((await pipeline.submit(ALICE, order(20_000))).verdict).toBe('needs_human');
    });

    it('executor_failed: the staged skill throws; its writes roll back and the proposal is failed', async () => {
      const out = await pipeline.submit(ALICE, { action: 'flaky.thing', payload: { x: 1 } });
      expect(out).toMatchObject({ verdict: 'executor_failed', status: 'failed', reason: expect.stringContaining('internal_error') });
      expect(await effects(out.proposalId)).toBe(0);
      expect((await pipeline.get('acme', id(out))).status).toBe('failed');
    });

    it('execute_not_permitted: the pipeline policy does not allow execute, or the proposer may not; the proposal goes to the human queue', async () => {
      await withPipeline({ policy: { allow: ['order.submit'], allowExecute: false } }, async (p3) => {
        const out = await p3.pipeline.submit(ALICE, order(100));
        expect(out).toMatchObject({
          verdict: 'execute_not_permitted',
          status: 'pending',
          reason: 'denied_execute_class',
          waitingFor: [{ permission: 'approval:decide' }],
        });
        const pending = await p3.pipeline.list('acme', { status: 'pending' });
        expect(pending.items.map((p) => p.id)).toContain(out.proposalId);
        const done = await p3.pipeline.decide(lead(), id(out), approve(1, 0, 'checked by hand'));
        expect(done).toMatchObject({ verdict: 'executed', status: 'executed' });
      });
      const mine = await pipeline.submit({ ...ALICE, mayExecute: false }, order(100));
      expect(mine).toMatchObject({ verdict: 'execute_not_permitted', status: 'pending', reason: expect.stringMatching(/may not execute/) });
      expect(await effects(mine.proposalId)).toBe(0);
    });

    it('rejects malformed input with the field named', async () => {
      await expect(pipeline.submit(ALICE, { action: '', payload: {} })).rejects.toThrow(InvalidProposalException);
      await expect(pipeline.submit({ tenantId: '', userId: 'x', permissions: [] }, order(100))).rejects.toMatchObject({
        field: 'tenantId',
      });
      await expect(pipeline.submit({ tenantId: 'acme', userId: 'x' } as never, order(100))).rejects.toMatchObject({ field: 'permissions' });
    });
  });

  describe('approval chains', () => {
    it('executes after the last approval with the approvers in the audit, who, when and why recorded', async () => {
      const p = await pipeline.submit(ALICE, order(150_000));
      const first = await pipeline.decide(lead('lee'), id(p), approve(1, 0, 'desk limit ok'));
      expect(first).toMatchObject({
        verdict: 'approved_pending_next_step',
        status: 'pending',
        version: 2,
        waitingFor: [{ name: 'second approver' }],
      });
      expect(await effects(p.proposalId)).toBe(0);
      const second = await pipeline.decide(lead('max'), id(p), approve(2, 1, 'second pair of eyes'));
      expect(second).toMatchObject({ verdict: 'executed', status: 'executed' });
      expect(await effects(p.proposalId)).toBe(1);
      const [effect] = await ds.query('SELECT approvers FROM effects WHERE proposal_id = $1', [p.proposalId]);
      expect(typeof effect.approvers === 'string' ? JSON.parse(effect.approvers) : effect.approvers).toEqual(['lee', 'max']);
      const record = await pipeline.get('acme', id(p));
      expect(record.decisions.map((d) => [d.step, d.decidedBy, d.decision, d.reason, d.version])).toEqual([
        [0, 'lee', 'approve', 'desk limit ok', 1],
        [1, 'max', 'approve', 'second pair of eyes', 2],
      ]);
      expect(record.decisions.every((d) => d.at instanceof Date)).toBe(true);
      const audit = await app.get(AgentAuditLog).query({ proposalId: id(p) });
      expect(audit).toMatchObject([{ skill: 'order.submit', outcome: 'ok', approvers: ['lee', 'max'], userId: 'alice', tenantId: 'acme' }]);
    });

    it('a chain governs a proposal whose proposer may not execute it: approval:decide without the chain’s permission is refused (attack: the default step approved a chained action)', async () => {
      const chains = {
        'order.submit': [{ minAmount: 0, steps: [{ name: 'desk lead', permission: 'desk:lead' }] }],
        'approval.record': [{ minAmount: 0, steps: [{ name: 'controller', permission: 'finance:control' }] }],
      };
      await withPipeline({ approval: { chains } }, async ({ pipeline: p, ds: d }) => {
        const clerk = { tenantId: 'acme', userId: 'cleo', permissions: ['approval:decide'] };
        const ran = async (pid: string) => Number((await d.query('SELECT count(*) AS n FROM effects WHERE proposal_id = $1', [pid]))[0].n);
        // A small order (no risk escalation) its proposer may not execute: the chain's step, not approval:decide.
        const small = await p.submit({ ...ALICE, mayExecute: false }, order(100));
        expect(small).toMatchObject({ verdict: 'execute_not_permitted', waitingFor: [{ name: 'desk lead', permission: 'desk:lead' }] });
        expect((await p.get('acme', id(small))).waitingStep).toEqual({ index: 0, name: 'desk lead', permission: 'desk:lead' });
        await expect(p.decide(clerk, id(small), approve(1, 0))).rejects.toThrow(/Step 1 \(desk lead\) needs the permission desk:lead/);
        await expect(p.previewEdit(clerk, id(small), { version: 1, payload: { symbol: 'ACME', qty: 2 } })).rejects.toThrow(
          ApprovalForbiddenException,
        );
        expect(await ran(id(small))).toBe(0);
        expect(await p.decide(lead('lee'), id(small), approve(1, 0))).toMatchObject({ verdict: 'executed' });
        // approval.request always waits for a human (its record never executes by itself): its chain applies too.
        const request = await p.submit(
          { tenantId: 'acme', userId: 'alice', permissions: ['approval:decide'], mayExecute: false },
          { action: 'approval.record', payload: { subject: 'the Q3 budget', amount: 500 } },
        );
        expect(request).toMatchObject({
          verdict: 'execute_not_permitted',
          waitingFor: [{ name: 'controller', permission: 'finance:control' }],
        });
        await expect(p.decide(clerk, id(request), approve(1, 0))).rejects.toThrow(ApprovalForbiddenException);
        const controller = { tenantId: 'acme', userId: 'cora', permissions: ['finance:control'] };
        expect(await p.decide(controller, id(request), approve(1, 0))).toMatchObject({
          verdict: 'executed',
          result: { approved: true, approvers: ['cora'] },
        });
      });
      // The pipeline's policy refusing execute takes the chain too.
      await withPipeline({ policy: { allow: ['order.submit'], allowExecute: false }, approval: { chains } }, async ({ pipeline: p }) => {
        const out = await p.submit(ALICE, order(100));
        expect(out).toMatchObject({ verdict: 'execute_not_permitted', waitingFor: [{ name: 'desk lead', permission: 'desk:lead' }] });
      });
    });

    it('a chain tightened in the configuration governs the proposals already waiting: its new steps are added, a loosened one removes none (attack: a proposal made under the old chain executed on one signature after a restart with a second step)', async () => {
      const own = await createTestDatabase();
      const before = { 'order.submit': [{ minAmount: 0, steps: [{ name: 'desk lead', permission: 'desk:lead' }] }] };
      const tightened = {
        'order.submit': [
          { minAmount: 0, steps: [{ name: 'desk lead', permission: 'desk:lead' }] },
          { minAmount: 500, steps: [{ name: 'risk officer', permission: 'risk:sign' }] },
        ],
      };
      const officer = { tenantId: 'acme', userId: 'omar', permissions: ['risk:sign'] };
      try {
        let started = await startPipelineApp(own, { approval: { chains: before } });
        const waiting = await started.pipeline.submit({ ...ALICE, mayExecute: false }, order(1000));
        const small = await started.pipeline.submit({ ...ALICE, mayExecute: false }, order(200));
        expect(waiting).toMatchObject({ verdict: 'execute_not_permitted', waitingFor: [{ name: 'desk lead' }] });
        await started.app.close();
        // The process starts again with the risk officer's step for 500 and more.
        started = await startPipelineApp(own, { approval: { chains: tightened } });
        const { pipeline: p, ds: d } = started;
        const ran = async (pid: string) => Number((await d.query('SELECT count(*) AS n FROM effects WHERE proposal_id = $1', [pid]))[0].n);
        expect(await p.decide(lead('lee'), id(waiting), approve(1, 0))).toMatchObject({
          verdict: 'approved_pending_next_step',
          waitingFor: [{ name: 'risk officer', permission: 'risk:sign' }],
        });
        expect(await ran(id(waiting))).toBe(0);
        expect((await p.get('acme', id(waiting))).steps.map((s) => s.name)).toEqual(['desk lead', 'risk officer']);
        expect(await p.decide(officer, id(waiting), approve(2, 1))).toMatchObject({ verdict: 'executed' });
        expect(await ran(id(waiting))).toBe(1);
        // Below the new threshold the chain asks nothing more: one signature still executes it.
        expect(await p.decide(lead('lee'), id(small), approve(1, 0))).toMatchObject({ verdict: 'executed' });
        await started.app.close();

        // Loosened again: a proposal waiting under the tightened chain keeps its steps (the stricter of both holds).
        started = await startPipelineApp(own, { approval: { chains: tightened } });
        const strict = await started.pipeline.submit({ ...ALICE, mayExecute: false }, order(1000));
        await started.app.close();
        started = await startPipelineApp(own, { approval: { chains: before } });
        expect(await started.pipeline.decide(lead('lee'), id(strict), approve(1, 0))).toMatchObject({
          verdict: 'approved_pending_next_step',
          waitingFor: [{ name: 'risk officer' }],
        });
        await started.app.close();
      } finally {
        await own.drop();
      }
    });

    it('a human rejection ends the proposal', async () => {
      const p = await pipeline.submit(ALICE, order(20_000));
      expect(await pipeline.decide(lead(), id(p), reject(1, 0, 'too risky'))).toMatchObject({
        verdict: 'rejected_by_human',
        status: 'rejected',
      });
      await expect(pipeline.decide(lead('max'), id(p), approve(2, 0))).rejects.toThrow(ProposalConflictException);
    });

    it('separation of duties: the proposer cannot approve; one person cannot approve two steps; the step permission is needed', async () => {
      const p = await pipeline.submit(as('lee'), order(150_000));
      await expect(pipeline.decide(lead('lee'), id(p), approve(1, 0, 'mine'))).rejects.toThrow(/proposer may not decide/);
      await pipeline.decide(lead('max'), id(p), approve(1, 0));
      await expect(pipeline.decide(lead('max'), id(p), approve(2, 1, 'again'))).rejects.toThrow(/already decided a step/);
      await expect(pipeline.decide({ tenantId: 'acme', userId: 'pat', permissions: ['desk:lead'] }, id(p), approve(2, 1))).rejects.toThrow(
        ApprovalForbiddenException,
      );
      expect(await effects(p.proposalId)).toBe(0);
    });

    it.each([
      ['lee\u200b', 'U+200B', 'a zero-width space: lee approving her own proposal as a look-alike'],
      ['\u2066lee', 'U+2066', 'a bidi isolate in front of lee'],
      ['lee\u00ad', 'U+00AD', 'a soft hyphen'],
    ])('refuses the approver %j (%s) with a 400 naming userId, nothing written (attack: %s)', async (approver, codePoint) => {
      const p = await pipeline.submit(as('lee'), order(150_000));
      const refused = pipeline.decide(lead(approver), id(p), approve(1, 0, 'looks like someone else'));
      await expect(refused).rejects.toBeInstanceOf(InvalidProposalException);
      await expect(refused).rejects.toMatchObject({ field: 'userId', message: expect.stringContaining(`userId holds ${codePoint}`) });
      expect((await pipeline.get('acme', id(p))).decisions).toEqual([]);
      await expect(pipeline.submit(as(approver), order(150_000))).rejects.toMatchObject({ field: 'userId' });
    });

    it('an expired proposal cannot be decided and shows as expired', async () => {
      await withPipeline({ approval: { expiresInMs: 30 } }, async (p4) => {
        const p = await p4.pipeline.submit(ALICE, order(20_000));
        await new Promise((r) => setTimeout(r, 80));
        await expect(p4.pipeline.decide(lead(), id(p), approve(1, 0, 'late'))).rejects.toMatchObject({ status: 'expired' });
        expect((await p4.pipeline.get('acme', id(p))).status).toBe('expired');
        expect((await p4.pipeline.list('acme', { status: 'pending' })).total).toBe(0);
      });
    });
  });

  describe('approve what you read', () => {
    it('an approver who read step 1 is not recorded as step 2 after someone else signed step 1: 409 with the current version, nothing runs', async () => {
      const p = await pipeline.submit(ALICE, order(150_000));
      const read = await pipeline.get('acme', id(p));
      expect(read).toMatchObject({ version: 1, waitingStep: { index: 0 } });
      await pipeline.decide(lead('lee'), id(p), approve(1, 0));
      const stale = pipeline.decide(lead('max'), id(p), approve(read.version, read.waitingStep!.index));
      await expect(stale).rejects.toBeInstanceOf(ProposalConflictException);
      await expect(pipeline.decide(lead('max'), id(p), approve(1, 0))).rejects.toMatchObject({
        current: { status: 'pending', version: 2, step: 1 },
      });
      await expect(pipeline.decide(lead('max'), id(p), approve(2, 0))).rejects.toMatchObject({ current: { version: 2, step: 1 } });
      await expect(pipeline.decide(lead('max'), id(p), approve(7, 1))).rejects.toBeInstanceOf(ProposalConflictException);
      expect((await pipeline.get('acme', id(p))).decisions).toHaveLength(1);
      expect(await effects(p.proposalId)).toBe(0);
    });

    it('decisions need the version and the step', async () => {
      const p = await pipeline.submit(ALICE, order(20_000));
      await expect(pipeline.decide(lead(), id(p), { decision: 'approve', reason: 'x' } as never)).rejects.toMatchObject({
        field: 'version',
      });
      await expect(pipeline.decide(lead(), id(p), { decision: 'approve', reason: 'x', version: 1 } as never)).rejects.toMatchObject({
        field: 'step',
      });
      await expect(pipeline.decide(lead(), id(p), { ...reject(1, 0), payload: { symbol: 'ACME', qty: 1 } })).rejects.toMatchObject({
        field: 'payload',
      });
    });
  });

  describe('approve with edits', () => {
    it('an edit that crosses a threshold is re-priced and gets the extra step; others sign the whole new chain; both payloads are recorded; the edited payload executes', async () => {
      const p = await pipeline.submit(ALICE, order(20_000));
      expect(p.waitingFor?.map((s) => s.name)).toEqual(['desk lead']);
      const edited = await pipeline.decide(lead('lee'), id(p), approve(1, 0, 'make it 1500', { symbol: 'ACME', qty: 1500 }));
      expect(edited).toMatchObject({
        verdict: 'approved_pending_next_step',
        amount: 150_000,
        version: 2,
        waitingFor: [{ name: 'desk lead' }, { name: 'second approver' }],
      });
      const read = await pipeline.get('acme', id(p));
      expect(read).toMatchObject({
        payload: { symbol: 'ACME', qty: 1500 },
        amount: 150_000,
        approvals: 0,
        waitingStep: { index: 0, name: 'desk lead' },
      });
      expect(read.decisions[0].edit).toEqual({
        before: { payload: { symbol: 'ACME', qty: 200 }, amount: 20_000 },
        after: { payload: { symbol: 'ACME', qty: 1500 }, amount: 150_000 },
      });
      // The editor proposed this payload: they cannot sign its chain.
      await expect(pipeline.decide(lead('lee'), id(p), approve(2, 0))).rejects.toThrow(ApprovalForbiddenException);
      await pipeline.decide(lead('max'), id(p), approve(2, 0, 'ok at 1500'));
      expect(await effects(p.proposalId)).toBe(0);
      const done = await pipeline.decide(lead('pat'), id(p), approve(3, 1, 'second pair of eyes'));
      expect(done).toMatchObject({ verdict: 'executed', result: { qty: 1500 } });
      const [effect] = await ds.query('SELECT payload, approvers FROM effects WHERE proposal_id = $1', [p.proposalId]);
      const parse = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v);
      expect(parse(effect.payload)).toEqual({ symbol: 'ACME', qty: 1500 });
      expect(parse(effect.approvers)).toEqual(['max', 'pat']);
    });

    it('an approver cannot edit past a step they may not sign, nor be the only signer of an edit (red team: edit then execute)', async () => {
      // Waiting for the default step (approval:decide); sam holds only that, and edits to an amount whose chain needs a desk lead.
      const p = await pipeline.submit({ ...ALICE, mayExecute: false }, order(500));
      const sam = { tenantId: 'acme', userId: 'sam', permissions: ['approval:decide'] };
      const edited = await pipeline.decide(sam, id(p), approve(1, 0, 'bigger', { symbol: 'ACME', qty: 98 }));
      expect(edited).toMatchObject({ verdict: 'approved_pending_next_step', status: 'pending', amount: 9_800 });
      const big = await pipeline.submit({ ...ALICE, mayExecute: false }, order(500));
      const bigEdit = await pipeline.decide(sam, id(big), approve(1, 0, 'bigger', { symbol: 'ACME', qty: 990 }));
      expect(bigEdit).toMatchObject({ status: 'pending', waitingFor: [{ name: 'desk lead', permission: 'desk:lead' }] });
      await expect(pipeline.decide({ ...sam, userId: 'tim' }, id(big), approve(2, 0))).rejects.toThrow(/desk:lead/);
      expect(await effects(big.proposalId)).toBe(0);
      expect(await effects(p.proposalId)).toBe(0);
    });

    it('an edit that breaks the schema, or that the risk review rejects, does not apply: the proposal is unchanged', async () => {
      const p = await pipeline.submit(ALICE, order(20_000));
      await expect(pipeline.decide(lead(), id(p), approve(1, 0, 'x', { symbol: 'ACME', qty: 0 }))).rejects.toMatchObject({
        field: 'payload/qty',
      });
      await expect(pipeline.decide(lead(), id(p), approve(1, 0, 'x', { symbol: 'ACME\u0000', qty: 1 }))).rejects.toThrow(
        ProposalEditRefusedException,
      );
      await expect(pipeline.decide(lead(), id(p), approve(1, 0, 'x', { symbol: 'ACME', qty: 6000 }))).rejects.toThrow(
        ProposalEditRefusedException,
      );
      await expect(pipeline.decide(lead(), id(p), approve(1, 0, 'x', { symbol: 'ACME', qty: 6000 }))).rejects.toThrow(/tenant limit/);
      expect(await pipeline.get('acme', id(p))).toMatchObject({ version: 1, payload: { symbol: 'ACME', qty: 200 }, decisions: [] });
    });
  });

  describe('edit preview', () => {
    it('says what an edit would do (amount, restarted chain, extra steps, risk) for the version read, and writes nothing', async () => {
      const p = await pipeline.submit(ALICE, order(20_000));
      const before = await pipeline.get('acme', id(p));
      const preview = await pipeline.previewEdit(lead(), id(p), { version: 1, payload: { symbol: 'ACME', qty: 1500 } });
      expect(preview).toEqual({
        ok: true,
        amount: 150_000,
        previousAmount: 20_000,
        steps: [
          { name: 'desk lead', permission: 'desk:lead' },
          { name: 'second approver', permission: 'approval:decide' },
        ],
        extraSteps: [{ name: 'second approver', permission: 'approval:decide' }],
        restarts: true,
        risk: { verdict: 'escalate', reason: expect.any(String) },
      });
      // What the preview said is what the approval with that edit does.
      expect(await pipeline.previewEdit(lead(), id(p), { version: 1, payload: { symbol: 'ACME', qty: 0 } })).toMatchObject({
        ok: false,
        field: 'payload/qty',
      });
      expect(await pipeline.previewEdit(lead(), id(p), { version: 1, payload: { symbol: 'ACME', qty: 6000 } })).toMatchObject({
        ok: false,
        reason: expect.stringMatching(/tenant limit/),
      });
      expect(await pipeline.get('acme', id(p))).toEqual(before);
      const edited = await pipeline.decide(lead('lee'), id(p), approve(1, 0, 'as previewed', { symbol: 'ACME', qty: 1500 }));
      expect(edited).toMatchObject({ amount: preview.ok ? preview.amount : -1, waitingFor: preview.ok ? preview.steps : [] });
    });

    it('only someone who may approve the waiting step may preview an edit of it: not the proposer, not without its permission', async () => {
      const p = await pipeline.submit(ALICE, order(20_000));
      const edit = { version: 1, payload: { symbol: 'ACME', qty: 300 } };
      await expect(pipeline.previewEdit({ ...lead(), userId: ALICE.userId }, id(p), edit)).rejects.toThrow(/proposer may not decide/);
      await expect(
        pipeline.previewEdit({ tenantId: 'acme', userId: 'sam', permissions: ['approval:decide'] }, id(p), edit),
      ).rejects.toThrow(ApprovalForbiddenException);
      expect(await pipeline.previewEdit(lead(), id(p), edit)).toMatchObject({ ok: true, amount: 30_000 });
    });

    it('refuses a stale version (409 with the current one), another tenant (not found), and malformed input naming the field', async () => {
      const p = await pipeline.submit(ALICE, order(20_000));
      await expect(pipeline.previewEdit(lead(), id(p), { version: 2, payload: { symbol: 'ACME', qty: 1 } })).rejects.toMatchObject({
        current: { status: 'pending', version: 1, step: 0 },
      });
      await expect(
        pipeline.previewEdit({ ...lead(), tenantId: 'globex' }, id(p), { version: 1, payload: { symbol: 'ACME', qty: 1 } }),
      ).rejects.toThrow(ProposalNotFoundException);
      for (const [input, field] of [
        [{ version: 0, payload: {} }, 'version'],
        [{ version: 1.5, payload: {} }, 'version'],
        [{ version: 1 }, 'payload'],
        [null, 'preview'],
      ] as const)
        await expect(pipeline.previewEdit(lead(), id(p), input as never)).rejects.toMatchObject({ field });
      await expect(pipeline.previewEdit(lead(), 'not-a-uuid', { version: 1, payload: {} })).rejects.toMatchObject({ field: 'id' });
    });

    it('a payload nested 100,000 deep (an application without a depth limit at its edge) is a refusal, not a RangeError', async () => {
      const p = await pipeline.submit(ALICE, order(20_000));
      let deep: unknown = 'x';
      for (let i = 0; i < 100_000; i++) deep = { a: deep };
      const payload = { symbol: 'ACME', qty: 1, note: deep };
      expect(await pipeline.previewEdit(lead(), id(p), { version: 1, payload })).toMatchObject({ ok: false });
      await expect(pipeline.decide(lead('lee'), id(p), approve(1, 0, 'deep', payload))).rejects.toThrow(ProposalEditRefusedException);
      // (a submission measured it already: too big to be a payload)
      await expect(pipeline.submit(ALICE, { action: 'order.submit', payload })).rejects.toMatchObject({ field: 'payload' });
    });
  });

  describe('custom reviewers', () => {
    it('a RiskReviewer can escalate or reject what the rules would approve; the first refusal wins', async () => {
      const seen: string[] = [];
      const reviewers = [
        {
          review: (input: { payload: unknown }) => (
            seen.push('first'),
            (input.payload as { symbol?: string }).symbol === 'RISKY'
              ? { verdict: 'escalate' as const, reason: 'watch list' }
              : { verdict: 'approve' as const }
          ),
        },
        {
          review: async (input: { payload: unknown }) => (
            seen.push('second'),
            (input.payload as { symbol?: string }).symbol === 'BANNED'
              ? { verdict: 'reject' as const, reason: 'sanctioned' }
              : { verdict: 'approve' as const }
          ),
        },
      ];
      await withPipeline({ reviewers }, async (p6) => {
        expect(await p6.pipeline.submit(ALICE, order(500, 'RISKY'))).toMatchObject({ verdict: 'needs_human', reason: 'watch list' });
        expect(seen).toEqual(['first']);
        expect(await p6.pipeline.submit(ALICE, order(500, 'BANNED'))).toMatchObject({ verdict: 'risk_rejected', reason: 'sanctioned' });
        expect(await p6.pipeline.submit(ALICE, order(500, 'FINE'))).toMatchObject({ verdict: 'executed' });
      });
    });
  });

  describe('velocity', () => {
    it('rejects past N proposals per window per user; other users are not affected', async () => {
      await withPipeline({ risk: { velocity: { max: 3, windowMs: 60_000, per: 'user' } } }, async (p5) => {
        const verdicts = [];
        for (let i = 0; i < 4; i++) verdicts.push((await p5.pipeline.submit(ALICE, order(100))).verdict);
        expect(verdicts).toEqual(['executed', 'executed', 'executed', 'risk_rejected']);
        expect((await p5.pipeline.submit(as('bob'), order(100))).verdict).toBe('executed');
        const racing = await Promise.all(Array.from({ length: 5 }, () => p5.pipeline.submit(as('cy'), order(100))));
        expect(racing.filter((o) => o.verdict === 'executed')).toHaveLength(3);
      });
    });
  });

  describe('exactly once', () => {
    it('approvers deciding the last step at the same moment execute it once', async () => {
      const p = await pipeline.submit(ALICE, order(20_000));
      const results = await Promise.allSettled(
        ['lee', 'max', 'pat', 'quin', 'ray'].map((u) => pipeline.decide(lead(u), id(p), approve(1, 0))),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect(
        results
          .filter((r) => r.status === 'rejected')
          .every((r) => (r as PromiseRejectedResult).reason instanceof ProposalConflictException),
      ).toBe(true);
      expect(await effects(p.proposalId)).toBe(1);
    });

    it('concurrent executions of one approved proposal run the staged skill once', async () => {
      const p = await pipeline.submit(ALICE, order(20_000));
      await ds.query(`UPDATE zmodu_proposals SET status = 'approved', approvals = 1 WHERE id = $1`, [p.proposalId]);
      const [a, b, recovered] = await Promise.all([pipeline.execute(id(p)), pipeline.execute(id(p)), pipeline.recover()]);
      expect(await effects(p.proposalId)).toBe(1);
      const ran = [a, b].filter((o) => o?.verdict === 'executed').length + recovered;
      expect(ran).toBe(1);
    });

    it('a run retried after its process died proposes again what it proposed: the stored proposal answers, nothing runs twice', async () => {
      // The AgentWorker starts a run again under the same run id when its process was killed after approval.submit
      // committed: the second start must not execute a second order, nor queue a second proposal for the humans.
      const run = { ...ALICE, runId: 'run-retried-1', agent: 'desk' };
      const small = await pipeline.submit(run, order(700));
      const again = await Promise.all([pipeline.submit(run, order(700)), pipeline.submit(run, order(700))]);
      for (const o of again)
        expect(o).toMatchObject({ verdict: 'executed', status: 'executed', proposalId: small.proposalId, replayed: true });
      expect(await effects(small.proposalId)).toBe(1);
      const large = await pipeline.submit(run, order(20_000));
      const largeAgain = await pipeline.submit(run, { action: 'order.submit', payload: { qty: 200, symbol: 'ACME' } });
      expect(largeAgain).toMatchObject({
        verdict: 'needs_human',
        status: 'pending',
        proposalId: large.proposalId,
        version: 1,
        replayed: true,
      });
      expect(Number((await ds.query(`SELECT count(*) AS n FROM zmodu_proposals WHERE run_id = 'run-retried-1'`))[0].n)).toBe(2);
      // Another payload, another run, another tenant's same run id: proposals of their own.
      expect((await pipeline.submit(run, order(800))).proposalId).not.toBe(small.proposalId);
      expect((await pipeline.submit({ ...run, runId: 'run-retried-2' }, order(700))).proposalId).not.toBe(small.proposalId);
      const other = await pipeline.submit({ ...as('alice', 'globex'), runId: 'run-retried-1' }, order(700));
      expect([other.replayed, other.proposalId === small.proposalId]).toEqual([undefined, false]);
      // Another user (or agent) of the tenant reusing the run id (a copied x-request-id): a proposal of their own.
      for (const who of [
        { ...run, userId: 'bob' },
        { ...run, agent: 'trader' },
      ]) {
        const theirs = await pipeline.submit(who, order(700));
        expect([theirs.replayed, theirs.proposalId === small.proposalId]).toEqual([undefined, false]);
      }
      // Without a run id (a direct submit) every call is a proposal of its own.
      const direct = [await pipeline.submit(ALICE, order(900)), await pipeline.submit(ALICE, order(900))];
      expect(direct[0].proposalId).not.toBe(direct[1].proposalId);
    });
  });

  describe('exactly once, a retried run after an approver edited its proposal', () => {
    it('gets the edited proposal back for the payload it first proposed: no second proposal for the humans to approve', async () => {
      const run = { ...ALICE, runId: 'run-edited-1', agent: 'desk' };
      const first = await pipeline.submit(run, order(20_000));
      expect(first).toMatchObject({ verdict: 'needs_human', status: 'pending' });
      // A desk lead cuts the order to 150 before another signs it: the stored payload is now the edited one.
      await pipeline.decide(lead('lee'), id(first), approve(1, 0, 'make it 150', { symbol: 'ACME', qty: 150 }));
      const signed = await pipeline.decide(lead('max'), id(first), approve(2, 0, 'ok at 150'));
      expect(signed).toMatchObject({ verdict: 'executed' });
      // The run's process died after its submit committed: the run starts again and proposes what it proposed.
      const again = await pipeline.submit(run, order(20_000));
      expect(again).toMatchObject({ proposalId: first.proposalId, status: 'executed', replayed: true });
      expect(Number((await ds.query(`SELECT count(*) AS n FROM zmodu_proposals WHERE run_id = 'run-edited-1'`))[0].n)).toBe(1);
      expect(await effects(first.proposalId)).toBe(1);
    });
  });

  describe('tenants', () => {
    it('another tenant neither sees nor decides a proposal (not found, as if it did not exist)', async () => {
      const p = await pipeline.submit(ALICE, order(20_000));
      await expect(pipeline.get('globex', id(p))).rejects.toThrow(ProposalNotFoundException);
      await expect(
        pipeline.decide({ tenantId: 'globex', userId: 'gina', permissions: ['desk:lead'] }, id(p), approve(1, 0)),
      ).rejects.toThrow(ProposalNotFoundException);
      expect((await pipeline.list('globex')).items.map((i) => i.id)).not.toContain(p.proposalId);
      expect(await effects(p.proposalId)).toBe(0);
    });
  });

  describe('skills', () => {
    const ctx = (
      permissions: string[] = ['order:submit'],
      policy = { allow: ['approval.submit', 'approval.request', 'order.submit'], allowExecute: true },
    ) => createSkillContext({ guard: new Guard(policy), tenantId: 'acme', userId: 'alice', permissions, agent: 'trader' });

    it('approval.submit routes into the pipeline and returns the verdict with the proposal id; it takes no amount', async () => {
      const r = await app
        .get(SkillDispatcher)
        .dispatch(ctx(), 'approval.submit', { action: 'order.submit', payload: { symbol: 'ACME', qty: 500 } });
      expect(r.value).toMatchObject({ verdict: 'needs_human', proposalId: expect.any(String), amount: 50_000 });
      const withAmount = await app
        .get(SkillDispatcher)
        .dispatch(ctx(), 'approval.submit', { action: 'order.submit', payload: { symbol: 'ACME', qty: 500 }, amount: 1 });
      expect(withAmount.error).toMatchObject({ error: 'InvalidArguments', problems: [{ path: '/amount' }] });
    });

    it('approval.submit proposes only the proposable actions', async () => {
      const r = await app.get(SkillDispatcher).dispatch(ctx(), 'approval.submit', { action: 'flaky.thing', payload: { x: 1 } });
      expect(r.ok).toBe(false);
      expect(await effects()).toBeGreaterThanOrEqual(0);
    });

    it('an agent that may not execute (allowExecute off) gets a human even for a small order, and cannot call the staged skill itself', async () => {
      const noExec = ctx(['order:submit'], { allow: ['approval.submit', 'order.submit'], allowExecute: false });
      const small = await app
        .get(SkillDispatcher)
        .dispatch(noExec, 'approval.submit', { action: 'order.submit', payload: { symbol: 'ACME', qty: 1 } });
      expect(small.value).toMatchObject({ verdict: 'execute_not_permitted', status: 'pending' });
      expect(await effects((small.value as PipelineOutcome).proposalId)).toBe(0);
      // The policy decides first (an execute-class skill with allowExecute off); a policy that allows it learns it is staged.
      for (const [c, reason] of [
        [noExec, 'denied_execute_class'],
        [ctx(), 'denied_staged'],
      ] as const) {
        const direct = await app.get(SkillDispatcher).dispatch(c, 'order.submit', { symbol: 'ACME', qty: 1 });
        expect(direct.error).toEqual({ error: 'ToolDenied', reason });
      }
    });

    it('approval.request requires approval:decide, takes subject and amount, and waits for a human', async () => {
      const denied = await app.get(SkillDispatcher).dispatch(ctx([]), 'approval.request', { subject: 'new desk', amount: 10 });
      expect(denied.error).toMatchObject({ error: 'PermissionDenied', permission: 'approval:decide' });
      const ok = await app.get(SkillDispatcher).dispatch(ctx(['approval:decide']), 'approval.request', { subject: 'new desk', amount: 10 });
      expect(ok.value).toMatchObject({ verdict: 'execute_not_permitted', status: 'pending', amount: 10 });
      const done = await pipeline.decide(lead('lee'), (ok.value as PipelineOutcome).proposalId as string, approve(1, 0, 'fine'));
      expect(done).toMatchObject({ verdict: 'executed', result: { approved: true, subject: 'new desk', amount: 10, approvers: ['lee'] } });
    });
  });
});

describe('PipelineModule at boot', () => {
  @Injectable()
  class PlainSkills {
    @Skill({ name: 'order.plain', action: 'execute', description: 'Not staged' })
    plain() {
      return null;
    }
  }

  /** Nest's log lines of a boot, by level (a logger of the test's own, for what the boot says). */
  class CapturingLogger implements LoggerService {
    readonly warnings: string[] = [];
    log(): void {}
    error(): void {}
    warn(message: unknown): void {
      this.warnings.push(String(message));
    }
  }

  // One database for every boot of this block (its migrations run once): each boot stands for a process started anew.
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  async function boot(options: Partial<PipelineModuleOptions>, logger = new CapturingLogger()): Promise<void> {
    const app = await Test.createTestingModule({
      imports: [
        // No retry: a boot this block makes fail must not leave a connection attempt running after it.
        TypeOrmModule.forRoot({
          ...(await db.options({
            migrations: [...ZMODU_GUARD_MIGRATIONS, ...ZMODU_PIPELINE_MIGRATIONS, PipelineEffects1764461200000],
            migrationsRun: true,
          })),
          retryAttempts: 0,
        }),
        GuardModule.forRoot({ auditStore: 'memory', quotaStore: 'memory' }),
        SkillsModule.forRoot(),
        PipelineModule.forRoot({ recoveryIntervalMs: 0, ...options } as PipelineModuleOptions),
      ],
      providers: [FixtureStagedSkills, PlainSkills],
    })
      .setLogger(logger)
      .compile();
    try {
      await app.init();
    } finally {
      await app.close().catch(() => undefined);
      await app
        .get<DataSource>(getDataSourceToken())
        .destroy()
        .catch(() => undefined);
    }
  }

  it('an action with thresholds, limits or chains but no amount function fails boot saying what to add', async () => {
    await expect(boot({ actions: { 'order.submit': {} }, risk: { thresholds: { 'order.submit': { escalateAt: 1 } } } })).rejects.toThrow(
      /'order.submit' has a limit or threshold but no amount function: add actions: \{ 'order.submit': \{ amount/,
    );
    await expect(
      boot({ actions: { 'order.submit': {} }, approval: { chains: { 'order.submit': [{ minAmount: 1, steps: [] }] } } }),
    ).rejects.toThrow(/an approval chain but no amount/);
    await expect(boot({ actions: { 'flaky.thing': {} }, risk: { tenantLimits: { '*': 5 } } })).rejects.toThrow(/'flaky.thing' has a limit/);
  });

  it('an action that is not a registered staged skill, or a rule or proposable naming no action, fails boot', async () => {
    await expect(boot({ actions: { 'order.plain': {} } })).rejects.toThrow(/not staged: add staged: true/);
    await expect(boot({ actions: { 'order.ghost': {} } })).rejects.toThrow(/'order.ghost' is not a registered skill/);
    await expect(boot({ actions: {}, proposable: ['order.submit'] })).rejects.toThrow(/proposable names 'order.submit'/);
    await expect(boot({ actions: {}, risk: { thresholds: { 'order.sumbit': { escalateAt: 1 } } } })).rejects.toThrow(
      /risk.thresholds names 'order.sumbit'/,
    );
    await expect(boot({ executors: {} } as never)).rejects.toThrow(/executors` is gone/);
  });

  it('says at boot which actions fall back to the default step when they wait for a human, unless defaultSteps is declared', async () => {
    const logger = new CapturingLogger();
    await boot(ORDER_RULES, logger);
    const approvals = logger.warnings.filter((w) => /approval chain/.test(w));
    expect(approvals).toEqual([
      "'flaky.thing', 'approval.record' can wait for a human (a risk escalation, or a proposer that may not execute it) and have no " +
        'approval chain: their approvals take the default step approver (approval:decide). Declare approval.chains: ' +
        "{ 'flaky.thing': [{ minAmount: 0, steps: [{ name, permission }] }] } to say who approves, or approval.defaultSteps to make the default your choice.",
      "the approval chain of 'order.submit' starts at minAmount 10000: a proposal of a smaller amount that waits for a human (a proposer " +
        "that may not execute it) takes the default step approver (approval:decide). Add a rule with minAmount: 0 to approval.chains['order.submit'], " +
        'or declare approval.defaultSteps to make the default your choice.',
    ]);
    const declared = new CapturingLogger();
    await boot(
      { ...ORDER_RULES, approval: { ...ORDER_RULES.approval, defaultSteps: [{ name: 'desk', permission: 'desk:approve' }] } },
      declared,
    );
    expect(declared.warnings.filter((w) => /approval chain/.test(w))).toEqual([]);
  });

  it('refuses a chain rule or a step it cannot apply, saying what to write (a step without a permission would be decided by anyone)', async () => {
    const chain = (rules: unknown) =>
      ({ ...ORDER_RULES, approval: { chains: { 'order.submit': rules } } }) as Partial<PipelineModuleOptions>;
    await expect(boot(chain([{ minAmount: 0, steps: [{ name: 'lead', permision: 'desk:lead' }] }]))).rejects.toThrow(
      /approval.chains\['order.submit'\]\[0\] step 0 must be \{ name, permission \}/,
    );
    await expect(boot(chain([{ minAmount: -1, steps: [] }]))).rejects.toThrow(/\[0\] must be \{ minAmount: a number >= 0/);
    await expect(boot(chain({ minAmount: 0 }))).rejects.toThrow(/approval.chains must be \{ \[action\]/);
    await expect(boot({ ...ORDER_RULES, approval: { defaultSteps: [] } })).rejects.toThrow(/defaultSteps must be a non-empty array/);
  });

  it('the rules of ORDER_RULES boot', async () => {
    await expect(boot(ORDER_RULES)).resolves.toBeUndefined();
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
      expect((await second.pipeline.get('acme', id(p))).status).toBe('executed');
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
      expect(await second.pipeline.decide(lead(), id(p), approve(1, 0, 'after restart'))).toMatchObject({ verdict: 'executed' });
      await second.app.close();
    } finally {
      await db.drop();
    }
  });
});
