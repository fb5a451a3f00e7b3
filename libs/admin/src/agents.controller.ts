import { Controller, Get, Optional } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from './swagger-decorators';
import { Agent, AgentBudget, AgentRegistry, AgentWorker } from '@zmodu/agent';
import { AgentMetricsSnapshot, AgentWorkerStats } from '@zmodu/agent/internal';
import { GuardStatsSnapshot } from '@zmodu/guard/internal';
import { PolicyHealth } from '@zmodu/guard';
import { policyNeedsAttention } from '@zmodu/guard/internal';
import { AGENTS_REPORT_SCHEMA } from './admin.openapi';
import { AgentModuleMissingException } from './exceptions/agent-module-missing.exception';
import { RequireAdminPermission } from './require-admin-permission.decorator';

/** One agent in GET /admin/agents. */
export interface AgentReport {
  readonly name: string;
  /** The skills offered to the model (its `skills` names or filter, resolved against the registry). */
  readonly skills: string[];
  readonly policy: {
    readonly allow: readonly string[];
    readonly deny: readonly string[];
    readonly allowExecute: boolean;
    readonly budget: number | null;
  };
  readonly budget: AgentBudget | null;
  readonly health: PolicyHealth;
  readonly needsAttention: boolean;
  readonly counters: { readonly guard: GuardStatsSnapshot; readonly runs: AgentMetricsSnapshot };
}

/** The answer of GET /admin/agents. */
export interface AgentsReport {
  readonly agents: AgentReport[];
  /** The background worker's counters on this instance; null when the worker is off. */
  readonly worker: AgentWorkerStats | null;
}

/**
 * The application's agents for an operator: each one's policy, its auditPolicy report and its counters (denials by
 * cause, runs, tokens), and the worker's counters. Agents belong to the application, not to a tenant, and the counters
 * are this instance's across all tenants: give the `agentsPermission` option ('admin:agents') to operators only.
 * Served with `agents: true`; without AgentModule in the application, the boot fails saying so.
 */
@ApiTags('admin: agents')
@Controller('admin/agents')
@RequireAdminPermission('agentsPermission')
export class AgentsController {
  private readonly registry: AgentRegistry;

  constructor(
    @Optional() registry?: AgentRegistry,
    @Optional() private readonly worker?: AgentWorker,
  ) {
    if (!registry) throw new AgentModuleMissingException();
    this.registry = registry;
  }

  @Get()
  @ApiOperation({
    summary: 'The agents, their policies, auditPolicy reports and counters',
    description: "Counters are this instance's since it started, across all tenants.",
  })
  @ApiOkResponse({ schema: AGENTS_REPORT_SCHEMA })
  list(): AgentsReport {
    const agents = this.registry
      .list()
      .map(report)
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return { agents, worker: this.worker ? this.worker.stats() : null };
  }
}

function report(agent: Agent): AgentReport {
  const guard = agent.spec.guard;
  const health = agent.auditPolicy();
  return {
    name: agent.name,
    skills: agent.tools().map((t) => t.name),
    policy: {
      allow: [...guard.allow],
      deny: [...(guard.deny ?? [])],
      allowExecute: guard.allowExecute === true,
      budget: guard.budget ?? null,
    },
    budget: agent.spec.budget ? { ...agent.spec.budget } : null,
    health,
    needsAttention: policyNeedsAttention(health),
    counters: { guard: agent.guardStats.snapshot(), runs: agent.getMetrics() },
  };
}
