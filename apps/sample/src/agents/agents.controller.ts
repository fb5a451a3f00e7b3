import { Body, Controller, Get, HttpCode, Param, Post, Res, ServiceUnavailableException } from '@nestjs/common';
import type { Response } from 'express';
import { Agent, AgentRegistry, AgentRunResult } from '@zmodu/agent';
import { PolicyHealth } from '@zmodu/guard';
import { PERMISSIONS } from '../auth/auth.constants';
import { RequestContext } from '../auth/request-context';
import { RequirePermission } from '../auth/require-permission.decorator';
import { RunGoalDto } from './run-goal.dto';
import { DATABASE_RETRY_AFTER_SECONDS } from '../edge/edge-exception.filter';

@Controller('agents')
export class AgentsController {
  constructor(
    private readonly agents: AgentRegistry,
    private readonly context: RequestContext,
  ) {}

  @Get()
  @RequirePermission(PERMISSIONS.agentRead)
  list() {
    return this.agents.list().map((a) => ({ name: a.name, skills: a.tools().map((t) => t.name), policy: a.spec.guard }));
  }

  /** Run an agent on a goal as the caller; returns the answer, the steps and every tool call with its guard decision. */
  @Post(':name/runs')
  @HttpCode(200)
  @RequirePermission(PERMISSIONS.agentRun)
  async run(@Param('name') name: string, @Body() body: RunGoalDto, @Res({ passthrough: true }) res: Response): Promise<AgentRunResult> {
    const result = await this.agent(name).run(body.goal, this.context.runContext());
    // A run stopped because its quota could not be read (the database is away) is an outage, told as one.
    if (result.stoppedReason === 'quota_unavailable') {
      res.setHeader('Retry-After', String(DATABASE_RETRY_AFTER_SECONDS));
      throw new ServiceUnavailableException({
        statusCode: 503,
        message: `The token quota cannot be read (the database is unavailable): retry in ${DATABASE_RETRY_AFTER_SECONDS} seconds.`,
        runId: result.runId,
      });
    }
    return result;
  }

  /** The auditPolicy report of the agent's guard policy against the registered skills. */
  @Get(':name/policy')
  @RequirePermission(PERMISSIONS.agentRead)
  policy(@Param('name') name: string): PolicyHealth & { agent: string; policy: unknown } {
    const agent = this.agent(name);
    return { agent: agent.name, policy: agent.spec.guard, ...agent.auditPolicy() };
  }

  /** An unknown agent throws AgentNotFoundException, which the edge's exception filter answers 404. */
  private agent(name: string): Agent {
    return this.agents.get(name);
  }
}
