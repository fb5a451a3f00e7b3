import { INestApplication, Injectable } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { GuardModule, ZMODU_GUARD_MIGRATIONS } from '@zmodu/guard';
import { PipelineModule, ProposalPipeline, ZMODU_PIPELINE_MIGRATIONS } from '@zmodu/pipeline';
import { Skill, SkillsModule } from '@zmodu/skills';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import request from 'supertest';
import { as, startAdminApp } from './__fixtures__/admin-fixtures';

/** A staged action whose approval chain names its own approver: a support lead (ticket:approve). */
@Injectable()
class TicketSkills {
  @Skill({
    name: 'ticket.close',
    action: 'execute',
    staged: true,
    description: 'Close a ticket (staged).',
    parameters: { type: 'object', properties: { ticket: { type: 'string' } }, required: ['ticket'], additionalProperties: false },
  })
  close(args: { ticket: string }) {
    return { closed: args.ticket };
  }
}

describe('the approvals endpoints and an approval chain', () => {
  let db: TestDatabase;
  let app: INestApplication;

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await startAdminApp(
      [
        TypeOrmModule.forRoot(
          await db.options({
            migrations: [...ZMODU_GUARD_MIGRATIONS, ...ZMODU_PIPELINE_MIGRATIONS],
            migrationsRun: true,
          }),
        ),
        GuardModule.forRoot({ auditStore: 'memory', quotaStore: 'memory' }),
        SkillsModule.forRoot(),
        PipelineModule.forRoot({
          actions: { 'ticket.close': { amount: () => 0 } },
          approval: { chains: { 'ticket.close': [{ minAmount: 0, steps: [{ name: 'support lead', permission: 'ticket:approve' }] }] } },
          recoveryIntervalMs: 0,
        }),
      ],
      { approvals: true },
      [TicketSkills],
    );
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('refuses 403 an approver with approval:decide but not the chain’s permission on a proposal whose proposer may not execute it (attack: the default step approved a chained action)', async () => {
    const proposed = await app
      .get(ProposalPipeline)
      .submit(
        { tenantId: 'acme', userId: 'alice', permissions: [], mayExecute: false },
        { action: 'ticket.close', payload: { ticket: 'T-1' } },
      );
    expect(proposed).toMatchObject({
      verdict: 'execute_not_permitted',
      waitingFor: [{ name: 'support lead', permission: 'ticket:approve' }],
    });
    const id = proposed.proposalId as string;
    const server = app.getHttpServer();
    const clerk = as('acme', 'approval:decide');

    // What the console shows and decides on: the chain's step.
    const read = await request(server).get(`/admin/approvals/${id}`).set(clerk).expect(200);
    expect(read.body.waitingStep).toEqual({ index: 0, name: 'support lead', permission: 'ticket:approve' });

    const decision = { reason: 'looks fine', version: 1, step: 0 };
    const refused = await request(server).post(`/admin/approvals/${id}/approve`).set(clerk).send(decision);
    expect([refused.status, refused.body.message]).toEqual([403, 'Step 1 (support lead) needs the permission ticket:approve.']);
    const preview = await request(server)
      .post(`/admin/approvals/${id}/preview`)
      .set(clerk)
      .send({ version: 1, payload: { ticket: 'T-2' } });
    expect(preview.status).toBe(403);
    expect((await app.get(ProposalPipeline).get('acme', id)).status).toBe('pending');

    const approved = await request(server)
      .post(`/admin/approvals/${id}/approve`)
      .set(as('acme', 'approval:decide', 'ticket:approve'))
      .send(decision);
    expect([approved.status, approved.body.verdict, approved.body.result]).toEqual([200, 'executed', { closed: 'T-1' }]);
  });
});
