import { Body, CanActivate, Controller, ExecutionContext, Get, Injectable, Post, Type } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AgentModule, AgentRegistry, AgentWorkerModule, ScriptedModelProvider, ZMODU_AGENT_MIGRATIONS } from '@zmodu/agent';
import type { AgentSpec } from '@zmodu/agent';
import { ZMODU_GUARD_MIGRATIONS } from '@zmodu/guard';
import { Skill, type SkillInvocation } from '@zmodu/skills';
import type { DataSourceOptions } from 'typeorm';
import { Module } from '@nestjs/common';
import { CallerContext, HttpCallerContext, RequireCaller, ZmoduHttpModule } from '../index';

// A plain Nest application that uses only the packages (no code of the sample): a skill, two agents on scripted
// models, its own authentication setting request.user, and ZmoduHttpModule with the filter and the runs controller.

/** The application's skill: it records the tenant and user each call ran under. */
@Injectable()
export class QuoteSkills {
  readonly calls: Array<{ tenantId: string | null; userId: string | null }> = [];

  @Skill({
    name: 'market.quote',
    action: 'read',
    description: 'The price of one symbol',
    parameters: { type: 'object', properties: { symbol: { type: 'string' } }, required: ['symbol'] },
  })
  quote(args: { symbol: string }, ctx: SkillInvocation) {
    this.calls.push({ tenantId: ctx.tenantId ?? null, userId: ctx.userId ?? null });
    return { symbol: args.symbol, price: 101.5 };
  }
}

/**
 * The application's authentication, as passport's would be: it sets `request.user` (here from test headers: x-user,
 * x-tenant, x-permissions), or nothing. It knows nothing of zmodu.
 */
@Injectable()
export class HeaderAuth implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined>; user?: unknown }>();
    const user = req.headers['x-user'];
    if (user)
      req.user = {
        userId: user,
        ...(req.headers['x-tenant'] !== undefined ? { tenantId: req.headers['x-tenant'] } : {}),
        permissions: (req.headers['x-permissions'] ?? 'agent:run').split(',').filter(Boolean),
      };
    return true;
  }
}

/** The application's own routes: the caller contract, and an agent run straight from its code. */
@Controller()
export class AppController {
  constructor(private readonly agents: AgentRegistry) {}

  @Get('me')
  @RequireCaller()
  me(@CallerContext() caller: HttpCallerContext) {
    return caller;
  }

  @Post('direct')
  direct(@Body() body: { agent: string; goal: string }) {
    return this.agents.get(body.agent).run(body.goal, { tenantId: 'acme', userId: 'alice', permissions: [] });
  }
}

export const agents = (): AgentSpec[] => [
  {
    name: 'trader',
    provider: new ScriptedModelProvider([
      { text: 'Looking at the price.', toolCalls: [{ name: 'market.quote', arguments: { symbol: 'ACME' } }] },
      { text: 'ACME is at 101.5.' },
    ]),
    skills: ['market.quote'],
    guard: { allow: ['market.quote'], allowExecute: false },
    budget: { tokensPerPeriod: 1_000_000 },
  },
  { name: 'analyst', provider: new ScriptedModelProvider([{ text: 'Nothing to add.' }]), skills: [], guard: { allow: [] } },
];

/** The plain application on a database (its TypeORM options): the worker's runs, the audit and the quota in it. */
export function plainAppModule(dataSource: () => Promise<DataSourceOptions>, { worker = true }: { worker?: boolean } = {}): Type {
  @Module({
    imports: [
      TypeOrmModule.forRootAsync({
        useFactory: async () => ({
          ...(await dataSource()),
          migrations: [...ZMODU_GUARD_MIGRATIONS, ...ZMODU_AGENT_MIGRATIONS],
          migrationsRun: true,
        }),
      }),
      AgentModule.forRoot({ agents: agents() }),
      ...(worker ? [AgentWorkerModule.forRoot({ runStore: 'typeorm' })] : []),
      ZmoduHttpModule.forRoot({ exceptionFilter: true, runsController: true }),
    ],
    controllers: [AppController],
    providers: [QuoteSkills, { provide: APP_GUARD, useClass: HeaderAuth }],
  })
  class PlainAppModule {}
  return PlainAppModule;
}

/** The headers HeaderAuth reads: a user, its tenant (none when undefined), its permissions. */
export const as = (tenant: string | undefined, user = 'alice', permissions = 'agent:run') => ({
  'x-user': user,
  ...(tenant !== undefined ? { 'x-tenant': tenant } : {}),
  'x-permissions': permissions,
});
