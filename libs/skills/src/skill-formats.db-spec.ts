import { Injectable } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import { openTestDataSource } from '@zmodu/db/testing';
import { Guard } from '@zmodu/guard';
import { DataSource } from 'typeorm';
import { createSkillContext, SkillInvocation } from './skill-context';
import { Skill } from './skill.decorator';
import { SkillDispatcher } from './skill.dispatcher';
import { skillsTestingModule } from './__fixtures__/skills-testing-module';

/** A skill as a new user writes it: its id declared a uuid, and looked up in PostgreSQL as one. */
@Injectable()
class OrderSkills {
  static dataSource: DataSource;
  queries = 0;

  @Skill({
    name: 'order.get',
    action: 'read',
    description: 'One order by id',
    parameters: { type: 'object', properties: { id: { type: 'string', format: 'uuid' } }, required: ['id'], additionalProperties: false },
  })
  async get(args: { id: string }, _ctx: SkillInvocation) {
    this.queries++;
    const rows: Array<{ id: string }> = await OrderSkills.dataSource.query('SELECT $1::uuid AS id', [args.id]);
    return { id: rows[0].id };
  }
}

describe('format in skill parameters, against a real database', () => {
  let db: Awaited<ReturnType<typeof openTestDataSource>>;
  let app: TestingModule;

  beforeAll(async () => {
    db = await openTestDataSource();
    OrderSkills.dataSource = db.ds;
    app = await skillsTestingModule({ providers: [OrderSkills] });
    await app.init();
  });

  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  const ctx = () =>
    createSkillContext({ guard: new Guard({ allow: ['order.get'], allowExecute: false }), tenantId: 't1', userId: 'u1', agent: 'a' });

  it('refuses a bad id with invalid_arguments before the handler runs (attack: format "uuid" was ignored, the id reached PostgreSQL and came back internal_error)', async () => {
    const dispatcher = app.get(SkillDispatcher);
    const skills = app.get(OrderSkills);
    const bad = await dispatcher.dispatch(ctx(), 'order.get', { id: "1' OR '1'='1" });
    expect(bad.outcome).toBe('invalid_arguments');
    expect(bad.error).toMatchObject({ error: 'InvalidArguments', problems: [{ path: '/id', message: 'must match format "uuid"' }] });
    expect(skills.queries).toBe(0);

    const id = '123e4567-e89b-12d3-a456-426614174000';
    const good = await dispatcher.dispatch(ctx(), 'order.get', { id });
    expect(good).toMatchObject({ ok: true, outcome: 'ok', value: { id } });
    expect(skills.queries).toBe(1);
  });
});
