import { randomUUID } from 'node:crypto';
import { NewProposal, ProposalStore, StoredDecision } from '../proposal.store';

export interface ProposalStoreHarness {
  store: ProposalStore;
  /** Release what the store holds (connections, files). */
  close?: () => Promise<void>;
}

const LEAD = { name: 'desk lead', permission: 'desk:lead' };
const SECOND = { name: 'second', permission: 'approval:decide' };

function proposal(over: Partial<NewProposal> = {}): NewProposal {
  return {
    id: randomUUID(),
    tenantId: 'acme',
    action: 'order.submit',
    payload: { symbol: 'ACME', qty: 5 },
    amount: 500,
    proposer: 'alice',
    permissions: ['order:submit'],
    agent: 'desk',
    runId: 'run-1',
    status: 'pending',
    verdict: 'needs_human',
    reason: 'large',
    steps: [LEAD, SECOND],
    expiresAt: new Date(Date.now() + 3_600_000),
    ...over,
  };
}

function decision(id: string, over: Partial<StoredDecision> = {}): StoredDecision {
  return {
    tenantId: 'acme',
    id,
    decidedBy: 'lee',
    permissions: ['desk:lead', 'approval:decide'],
    decision: 'approve',
    reason: 'fine',
    version: 1,
    step: 0,
    defaultPermission: 'approval:decide',
    ...over,
  };
}

/**
 * The shared cases every ProposalStore must pass. Call it inside a describe() of your own with a
 * factory that returns a fresh store (its tables may hold other rows: every case uses new ids).
 */
export function proposalStoreContract(factory: () => Promise<ProposalStoreHarness>): void {
  let h: ProposalStoreHarness;
  beforeEach(async () => {
    h = await factory();
  });
  afterEach(async () => {
    await h.close?.();
  });

  it('writes a proposal and reads it back whole, for its tenant only', async () => {
    const p = proposal({ tenantId: `t-${randomUUID()}` });
    await h.store.insert(p);
    const got = await h.store.get(p.tenantId, p.id);
    expect(got).toMatchObject({
      id: p.id,
      tenantId: p.tenantId,
      action: 'order.submit',
      payload: p.payload,
      amount: 500,
      proposer: 'alice',
      permissions: ['order:submit'],
      agent: 'desk',
      status: 'pending',
      verdict: 'needs_human',
      reason: 'large',
      steps: [LEAD, SECOND],
      approvals: 0,
      version: 1,
      runId: 'run-1',
      decisions: [],
      waitingStep: { index: 0, ...LEAD },
    });
    expect(got?.createdAt).toBeInstanceOf(Date);
    expect(await h.store.get('other', p.id)).toBeNull();
    expect(await h.store.get(p.tenantId, 'not-a-uuid')).toBeNull();
    expect(await h.store.get('constructor', p.id)).toBeNull();
  });

  it('lists a tenant page by page, newest first, filtered by status', async () => {
    const tenant = `t-${randomUUID()}`;
    for (const status of ['pending', 'pending', 'rejected'] as const) await h.store.insert(proposal({ tenantId: tenant, status }));
    await h.store.insert(proposal({ tenantId: `t-${randomUUID()}` }));
    const all = await h.store.list(tenant, { page: 1, limit: 2 });
    expect(all.total).toBe(3);
    expect(all.items).toHaveLength(2);
    expect((await h.store.list(tenant, { page: 2, limit: 2 })).items).toHaveLength(1);
    expect((await h.store.list(tenant, { status: 'pending', page: 1, limit: 10 })).total).toBe(2);
  });

  it('expires pending proposals past their time, of one tenant, and bumps their version', async () => {
    const tenant = `t-${randomUUID()}`;
    const old = proposal({ tenantId: tenant, expiresAt: new Date(Date.now() - 1000) });
    const fresh = proposal({ tenantId: tenant });
    const elsewhere = proposal({ tenantId: `t-${randomUUID()}`, expiresAt: new Date(Date.now() - 1000) });
    for (const p of [old, fresh, elsewhere]) await h.store.insert(p);
    expect(await h.store.expire(tenant)).toBe(1);
    expect(await h.store.get(tenant, old.id)).toMatchObject({ status: 'expired', version: 2, waitingStep: null });
    expect((await h.store.get(tenant, fresh.id))?.status).toBe('pending');
    expect((await h.store.get(elsewhere.tenantId, elsewhere.id))?.status).toBe('pending');
    expect((await h.store.decide(decision(old.id, { tenantId: tenant, version: 2 }))).applied).toBe(false);
  });

  it('expires named pending proposals now, of one tenant only; a decided one stays decided', async () => {
    const tenant = `t-${randomUUID()}`;
    const named = proposal({ tenantId: tenant });
    const other = proposal({ tenantId: tenant });
    const elsewhere = proposal({ tenantId: `t-${randomUUID()}` });
    for (const p of [named, other, elsewhere]) await h.store.insert(p);
    expect(await h.store.expire(tenant, [named.id, elsewhere.id, 'not-an-id'])).toBe(1);
    expect((await h.store.get(tenant, named.id))?.status).toBe('expired');
    expect((await h.store.get(tenant, other.id))?.status).toBe('pending');
    expect((await h.store.get(elsewhere.tenantId, elsewhere.id))?.status).toBe('pending');
    // A decision after it finds the proposal expired.
    expect((await h.store.decide(decision(named.id, { tenantId: tenant, version: 2 }))).applied).toBe(false);
    expect(await h.store.expire(tenant, [named.id])).toBe(0);
  });

  it('applies a decision only at the version and the step read, by someone who may decide it', async () => {
    const p = proposal();
    await h.store.insert(p);
    for (const wrong of [
      { version: 2 },
      { step: 1 },
      { tenantId: 'globex' },
      { decidedBy: 'alice' },
      { permissions: ['approval:decide'] },
    ] as Partial<StoredDecision>[])
      expect(await h.store.decide(decision(p.id, wrong))).toEqual({ applied: false, alreadyDecided: false });
    expect(await h.store.get('acme', p.id)).toMatchObject({ version: 1, approvals: 0, decisions: [] });
    expect(await h.store.decide(decision(p.id))).toEqual({ applied: true, status: 'pending', version: 2 });
    // The same person may not decide the next step; the next approver must name version 2, step 1.
    expect((await h.store.decide(decision(p.id, { version: 2, step: 1 }))).applied).toBe(false);
    expect((await h.store.decide(decision(p.id, { decidedBy: 'max', version: 1, step: 1 }))).applied).toBe(false);
    expect(await h.store.decide(decision(p.id, { decidedBy: 'max', version: 2, step: 1 }))).toEqual({
      applied: true,
      status: 'approved',
      version: 3,
    });
    const got = await h.store.get('acme', p.id);
    expect(got).toMatchObject({ status: 'approved', approvals: 2, version: 3, waitingStep: null });
    expect(got?.decisions.map((d) => [d.step, d.decidedBy, d.decision, d.version])).toEqual([
      [0, 'lee', 'approve', 1],
      [1, 'max', 'approve', 2],
    ]);
  });

  it('a reject settles the proposal; a decision after it does not apply', async () => {
    const p = proposal();
    await h.store.insert(p);
    expect(await h.store.decide(decision(p.id, { decision: 'reject', reason: 'no' }))).toEqual({
      applied: true,
      status: 'rejected',
      version: 2,
    });
    expect(await h.store.get('acme', p.id)).toMatchObject({ status: 'rejected', reason: 'rejected by lee: no' });
    expect((await h.store.decide(decision(p.id, { decidedBy: 'max', version: 2 }))).applied).toBe(false);
  });

  it('an approval with an edit replaces payload, amount and steps, restarts the chain for others to sign, and records both payloads', async () => {
    const p = proposal({ steps: [LEAD] });
    await h.store.insert(p);
    const edit = {
      before: { payload: p.payload, amount: 500 },
      after: { payload: { symbol: 'ACME', qty: 50 }, amount: 5000 },
      steps: [LEAD, SECOND],
    };
    expect(await h.store.decide(decision(p.id, { edit }))).toEqual({ applied: true, status: 'pending', version: 2 });
    const got = await h.store.get('acme', p.id);
    expect(got).toMatchObject({
      payload: { symbol: 'ACME', qty: 50 },
      amount: 5000,
      steps: [LEAD, SECOND],
      approvals: 0,
      waitingStep: { index: 0, ...LEAD },
    });
    expect(got?.decisions[0]).toMatchObject({ decidedBy: 'lee', version: 1, edit: { before: edit.before, after: edit.after } });
    // The editor cannot sign the chain of their own edit; others sign every step of it.
    expect((await h.store.decide(decision(p.id, { version: 2, step: 0 }))).applied).toBe(false);
    expect(await h.store.decide(decision(p.id, { decidedBy: 'max', version: 2, step: 0 }))).toEqual({
      applied: true,
      status: 'pending',
      version: 3,
    });
    expect(await h.store.decide(decision(p.id, { decidedBy: 'pat', version: 3, step: 1 }))).toEqual({
      applied: true,
      status: 'approved',
      version: 4,
    });
    expect((await h.store.get('acme', p.id))?.decisions.map((d) => [d.decidedBy, d.step, d.version])).toEqual([
      ['lee', 0, 1],
      ['max', 0, 2],
      ['pat', 1, 3],
    ]);
  });

  it('many approvers deciding the same version at once: exactly one decision applies', async () => {
    const p = proposal({ steps: [LEAD] });
    await h.store.insert(p);
    const writes = await Promise.all(Array.from({ length: 12 }, (_, i) => h.store.decide(decision(p.id, { decidedBy: `lead-${i}` }))));
    expect(writes.filter((w) => w.applied)).toHaveLength(1);
    expect((await h.store.get('acme', p.id))?.decisions).toHaveLength(1);
  });

  it('claims an approved proposal once: concurrent claimers get it at most once, and executed/failed settle it', async () => {
    const p = proposal({ status: 'approved', verdict: 'needs_human', steps: [] });
    await h.store.insert(p);
    expect(await h.store.approvedIds(1000)).toContain(p.id);
    let claims = 0;
    await Promise.all(
      Array.from({ length: 6 }, () =>
        h.store.transaction(async (tx) => {
          const got = await h.store.claimApproved(tx, p.id);
          if (!got) return;
          claims++;
          await new Promise((r) => setTimeout(r, 50));
          await h.store.markExecuted(tx, p.id, { ok: 1 });
        }),
      ),
    );
    expect(claims).toBe(1);
    expect(await h.store.get('acme', p.id)).toMatchObject({ status: 'executed', result: { ok: 1 } });
    expect(await h.store.approvedIds(1000)).not.toContain(p.id);
    expect(await h.store.markFailed(p.id, 'late')).toBe(false);
    const q = proposal({ status: 'approved', steps: [] });
    await h.store.insert(q);
    expect(await h.store.markFailed(q.id, 'downstream refused')).toBe(true);
    expect(await h.store.get('acme', q.id)).toMatchObject({ status: 'failed', verdict: 'executor_failed', reason: 'downstream refused' });
  });

  it('a claim rolled back leaves the proposal approved', async () => {
    const p = proposal({ status: 'approved', steps: [] });
    await h.store.insert(p);
    await expect(
      h.store.transaction(async (tx) => {
        expect(await h.store.claimApproved(tx, p.id)).not.toBeNull();
        await h.store.markExecuted(tx, p.id, null);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect((await h.store.get('acme', p.id))?.status).toBe('approved');
  });

  it('counts recent proposals under the velocity lock, per tenant or per proposer', async () => {
    const tenant = `t-${randomUUID()}`;
    await h.store.insert(proposal({ tenantId: tenant, proposer: 'a' }));
    await h.store.insert(proposal({ tenantId: tenant, proposer: 'b' }));
    const since = new Date(Date.now() - 60_000);
    const counted = await h.store.transaction(async (tx) => {
      await h.store.lockVelocity(tx, JSON.stringify([tenant]));
      return [await h.store.countRecent(tx, tenant, null, since), await h.store.countRecent(tx, tenant, 'a', since)];
    });
    expect(counted).toEqual([2, 1]);
  });
}
