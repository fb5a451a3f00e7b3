import { Controller, Get, Param } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { Agent, AgentRegistry } from '@zmodu/agent';
import { PolicyHealth } from '@zmodu/guard';
import { PERMISSIONS } from '../auth/auth.constants';
import { RequirePermission } from '../auth/require-permission.decorator';

/**
 * The sample's agents and their policies. The runs (POST /agents/:name/runs as JSON or Server-Sent Events, POST
 * /agents/:name/goals, GET /agents/runs/:id) are @zmodu/http's runs controller (ZmoduHttpModule, runsController).
 */
@ApiTags('agents')
@ApiBearerAuth()
@Controller('agents')
export class AgentsController {
  constructor(private readonly agents: AgentRegistry) {}

  @Get()
  @RequirePermission(PERMISSIONS.agentRead)
  list() {
    return this.agents.list().map((a) => ({ name: a.name, skills: a.tools().map((t) => t.name), policy: a.spec.guard }));
  }

  /** The auditPolicy report of the agent's guard policy against the registered skills. */
  @Get(':name/policy')
  @RequirePermission(PERMISSIONS.agentRead)
  policy(@Param('name') name: string): PolicyHealth & { agent: string; policy: unknown } {
    const agent = this.agent(name);
    return { agent: agent.name, policy: agent.spec.guard, ...agent.auditPolicy() };
  }

  /** An unknown agent throws AgentNotFoundException, which the exception filter (@zmodu/http) answers 404. */
  private agent(name: string): Agent {
    return this.agents.get(name);
  }
}
