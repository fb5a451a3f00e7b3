import { Injectable } from '@nestjs/common';
import { Guard } from '@zmodu/guard';
import { simulateMissingPeers } from '@zmodu/guard/testing';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsEnum,
  IsIn,
  IsInt,
  IsISO8601,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { defineSkill } from './define-skill';
import { createSkillContext, SkillInvocation } from './skill-context';
import { Skill } from './skill.decorator';
import { SkillDispatcher } from './skill.dispatcher';
import { SkillRegistry } from './skill.registry';
import { skillsTestingModule } from './__fixtures__/skills-testing-module';

enum Side {
  Buy = 'buy',
  Sell = 'sell',
}

class Leg {
  @IsString()
  @Matches(/^[A-Z]+$/)
  symbol!: string;

  @IsInt()
  @Min(1)
  qty!: number;
}

class DraftOrderDto {
  @IsString()
  @MaxLength(12)
  @Matches(/^[A-Z]+$/)
  symbol!: string;

  @IsInt()
  @Min(1)
  @Max(1000)
  qty!: number;

  @IsOptional()
  @IsEnum(Side)
  side?: Side;

  @IsOptional()
  @IsIn(['day', 'gtc'])
  tif?: string;

  @IsOptional()
  @ValidateNested({ each: true })
  @Type(() => Leg)
  @ArrayMaxSize(2)
  legs?: Leg[];

  @IsOptional()
  @IsString({ each: true })
  tags?: string[];

  /** A method of the DTO: the handler gets an instance, not a plain object. */
  describe(): string {
    return `${this.side ?? 'buy'} ${this.qty} ${this.symbol}`;
  }
}

@Injectable()
class DtoSkills {
  readonly seen: unknown[] = [];

  @Skill({ name: 'order.draft', action: 'propose', description: 'Draft an order', parameters: DraftOrderDto })
  draft(args: DraftOrderDto, _ctx: SkillInvocation) {
    this.seen.push(args);
    return { drafted: args.describe(), legs: args.legs?.length ?? 0 };
  }
}

describe('typed skills: parameters as a class-validator DTO class', () => {
  let dispatcher: SkillDispatcher;
  let registry: SkillRegistry;
  let skills: DtoSkills;
  const ctx = () => createSkillContext({ guard: new Guard({ allow: ['order.draft'] }), tenantId: 't1', userId: 'u1', permissions: [] });

  beforeEach(async () => {
    const moduleRef = await skillsTestingModule({ providers: [DtoSkills] });
    await moduleRef.init();
    dispatcher = moduleRef.get(SkillDispatcher);
    registry = moduleRef.get(SkillRegistry);
    skills = moduleRef.get(DtoSkills);
  });

  it('tells the model exactly the DTO: its JSON Schema is made from the decorators (no other field accepted)', () => {
    expect(registry.get('order.draft')!.parameters).toEqual({
      type: 'object',
      properties: {
        symbol: { type: 'string', maxLength: 12, pattern: '^[A-Z]+$' },
        qty: { type: 'integer', minimum: 1, maximum: 1000 },
        side: { enum: ['buy', 'sell'] },
        tif: { enum: ['day', 'gtc'] },
        legs: {
          type: 'array',
          maxItems: 2,
          items: {
            type: 'object',
            properties: { symbol: { type: 'string', pattern: '^[A-Z]+$' }, qty: { type: 'integer', minimum: 1 } },
            required: ['symbol', 'qty'],
            additionalProperties: false,
          },
        },
        tags: { type: 'array', items: { type: 'string' } },
      },
      required: ['symbol', 'qty'],
      additionalProperties: false,
    });
  });

  it('hands the handler a DTO instance (nested ones too), and refuses what class-validator refuses, with paths', async () => {
    const ok = await dispatcher.dispatch(ctx(), 'order.draft', {
      symbol: 'ACME',
      qty: 10,
      side: 'sell',
      legs: [{ symbol: 'ABC', qty: 1 }],
    });
    expect(ok).toMatchObject({ ok: true, value: { drafted: 'sell 10 ACME', legs: 1 } });
    expect(skills.seen[0]).toBeInstanceOf(DraftOrderDto);
    expect((skills.seen[0] as DraftOrderDto).legs![0]).toBeInstanceOf(Leg);

    const extra = await dispatcher.dispatch(ctx(), 'order.draft', { symbol: 'ACME', qty: 10, admin: true });
    expect(extra).toMatchObject({ ok: false, outcome: 'invalid_arguments' });
    const nested = await dispatcher.dispatch(ctx(), 'order.draft', { symbol: 'ACME', qty: 10, legs: [{ symbol: 'ABC', qty: 0 }] });
    expect(nested).toMatchObject({ ok: false, outcome: 'invalid_arguments', error: { error: 'InvalidArguments' } });
    expect(skills.seen).toHaveLength(1);
  });

  it('refuses at boot a DTO rule that JSON Schema cannot tell, a field without a type, and a nested one without @Type', () => {
    class Dated {
      @IsISO8601()
      at!: string;
    }
    class Untyped {
      @IsOptional()
      note?: string;
    }
    class NoType {
      @ValidateNested()
      leg!: Leg;
    }
    const register = (parameters: new () => object, name: string) =>
      registry.register(defineSkill({ name, description: 'x', parameters, handler: () => null }));
    expect(() => register(Dated, 'dated.x')).toThrow(
      /Dated\.at uses the class-validator rule 'isIso8601', which cannot be told to the model as JSON Schema/,
    );
    expect(() => register(Untyped, 'untyped.x')).toThrow(/Untyped\.note has no type: declare it/);
    expect(() => register(NoType, 'notype.x')).toThrow(/NoType\.leg is @ValidateNested without @Type/);
  });

  it('without class-validator installed, a DTO skill fails at boot naming the packages to install', () => {
    const restore = simulateMissingPeers('class-validator');
    try {
      expect(() =>
        registry.register(defineSkill({ name: 'dto.x', description: 'x', parameters: DraftOrderDto, handler: (args) => args.describe() })),
      ).toThrow(
        /a DTO class as skill parameters needs the class-validator package: npm install class-validator@\^0\.15\.0 class-transformer@\^0\.5\.1/,
      );
    } finally {
      restore();
    }
  });
});
