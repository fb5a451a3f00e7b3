import { Injectable } from '@nestjs/common';
import { AgentAuditLog, Guard } from '@zmodu/guard';
import { z } from 'zod';
import { defineSkill } from './define-skill';
import { InvalidSkillDefinitionException } from './exceptions/invalid-skill-definition.exception';
import { createSkillContext, SkillInvocation } from './skill-context';
import { Skill } from './skill.decorator';
import { SkillDispatcher } from './skill.dispatcher';
import { SkillRegistry } from './skill.registry';
import { skillsTestingModule } from './__fixtures__/skills-testing-module';
import { toSkillsJson } from './catalog-export';

const Order = z.object({
  symbol: z
    .string()
    .min(1)
    .max(12)
    .regex(/^[A-Z]+$/),
  qty: z.number().int().positive(),
  side: z.enum(['buy', 'sell']).default('buy'),
  note: z.string().trim().optional(),
});

@Injectable()
class TypedSkills {
  readonly seen: unknown[] = [];

  @Skill({ name: 'order.draft', action: 'propose', description: 'Draft an order', parameters: Order })
  draft(args: z.output<typeof Order>, ctx: SkillInvocation) {
    this.seen.push(args);
    // Typed: no cast. `side` has its default, `note` is trimmed.
    return { drafted: `${args.side} ${args.qty} ${args.symbol}`, note: args.note ?? null, tenant: ctx.tenantId };
  }
}

describe('typed skills: parameters as a Standard Schema (zod 4), @Skill and defineSkill', () => {
  let dispatcher: SkillDispatcher;
  let registry: SkillRegistry;
  let audit: AgentAuditLog;
  let skills: TypedSkills;
  const ctx = () =>
    createSkillContext({ guard: new Guard({ allow: ['order.draft', 'order.cancel'] }), tenantId: 't1', userId: 'u1', permissions: [] });

  beforeEach(async () => {
    const moduleRef = await skillsTestingModule({ providers: [TypedSkills], guard: { audit: { flushIntervalMs: 60_000 } } });
    await moduleRef.init();
    dispatcher = moduleRef.get(SkillDispatcher);
    registry = moduleRef.get(SkillRegistry);
    audit = moduleRef.get(AgentAuditLog);
    skills = moduleRef.get(TypedSkills);
  });

  it('gives the model and MCP the JSON Schema the schema makes of its input (no $schema)', () => {
    const skill = registry.get('order.draft')!;
    expect(skill.parameters).toEqual({
      type: 'object',
      properties: {
        symbol: { type: 'string', minLength: 1, maxLength: 12, pattern: '^[A-Z]+$' },
        qty: { type: 'integer', exclusiveMinimum: 0, maximum: Number.MAX_SAFE_INTEGER },
        side: { type: 'string', enum: ['buy', 'sell'], default: 'buy' },
        note: { type: 'string' },
      },
      required: ['symbol', 'qty'],
    });
    expect(toSkillsJson(registry).find((s) => s.name === 'order.draft')).toMatchObject({ parameters: skill.parameters });
  });

  it("hands the handler the schema's output (defaults, transforms), and refuses what it refuses as invalid arguments", async () => {
    const ok = await dispatcher.dispatch(ctx(), 'order.draft', { symbol: 'ACME', qty: 10, note: '  rush  ' });
    expect(ok).toMatchObject({ ok: true, value: { drafted: 'buy 10 ACME', note: 'rush', tenant: 't1' } });
    expect(skills.seen).toEqual([{ symbol: 'ACME', qty: 10, side: 'buy', note: 'rush' }]);

    // Refused by the JSON Schema (what the model saw) before the handler.
    const bad = await dispatcher.dispatch(ctx(), 'order.draft', { symbol: 'acme', qty: 1.5 });
    expect(bad).toMatchObject({ ok: false, outcome: 'invalid_arguments', error: { error: 'InvalidArguments' } });
    expect(skills.seen).toHaveLength(1);
  });

  it("refuses what only the schema's own validate catches (a refinement), with its path and message, and audits it", async () => {
    const Cancel = z
      .object({ orderId: z.string() })
      .refine((v) => v.orderId.startsWith('o-'), { message: 'orderId must start with o-', path: ['orderId'] });
    const handled: string[] = [];
    registry.register(
      defineSkill({
        name: 'order.cancel',
        action: 'propose',
        description: 'Cancel an order',
        parameters: Cancel,
        handler: ({ orderId }) => {
          handled.push(orderId); // typed as string: no cast
          return { cancelled: orderId };
        },
      }),
    );
    const refused = await dispatcher.dispatch(ctx(), 'order.cancel', { orderId: 'x-1' });
    expect(refused).toMatchObject({
      ok: false,
      outcome: 'invalid_arguments',
      error: { error: 'InvalidArguments', problems: [{ path: '/orderId', message: 'orderId must start with o-' }] },
    });
    expect(handled).toEqual([]);
    expect(await dispatcher.dispatch(ctx(), 'order.cancel', { orderId: 'o-1' })).toMatchObject({ ok: true, value: { cancelled: 'o-1' } });
    expect(handled).toEqual(['o-1']);
    await audit.flush();
    const entries = await audit.query({ tenantId: 't1' });
    expect(entries.map((e) => [e.skill, e.outcome])).toEqual(
      expect.arrayContaining([
        ['order.cancel', 'invalid_arguments'],
        ['order.cancel', 'ok'],
      ]),
    );
  });

  it('refuses a Standard Schema that cannot give its JSON Schema, or whose JSON Schema is not of an object, saying what to do', () => {
    const noJson = { '~standard': { version: 1 as const, vendor: 'acme', validate: (v: unknown) => ({ value: v }) } };
    expect(() => defineSkillRegistered(registry, noJson)).toThrow(InvalidSkillDefinitionException);
    expect(() => defineSkillRegistered(registry, noJson)).toThrow(
      /acme schema that cannot give its JSON Schema .* \(zod 4.2 or later\), or give parameters as JSON Schema/,
    );
    expect(() => defineSkillRegistered(registry, z.string())).toThrow(
      /parameters must describe an object .*the JSON Schema that the zod schema gives/,
    );
  });
});

function defineSkillRegistered(registry: SkillRegistry, parameters: unknown) {
  return registry.register(defineSkill({ name: 'bad.params', description: 'x', parameters: parameters as never, handler: () => null }));
}
