import { Body, Controller, Get, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Agent, AgentRegistry } from '@zmodu/agent';
import { PolicyHealth } from '@zmodu/guard';
import { PERMISSIONS } from '../auth/auth.constants';
import { RequestContext } from '../auth/request-context';
import { RequirePermission } from '../auth/require-permission.decorator';
import { RunGoalDto } from './run-goal.dto';
import { refuseUnreadableQuota } from './quota-outage';
import { acceptsEventStream, streamRun } from './run-event-stream';

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

  /**
   * Run an agent on a goal as the caller; returns the answer, the steps and every tool call with its guard decision.
   * With `Accept: text/event-stream`, the same run as Server-Sent Events (step, delta, final; see streamRun).
   */
  @Post(':name/runs')
  @HttpCode(200)
  @RequirePermission(PERMISSIONS.agentRun)
  async run(@Param('name') name: string, @Body() body: RunGoalDto, @Req() req: Request, @Res() res: Response): Promise<void> {
    const agent = this.agent(name);
    const context = this.context.runContext();
    if (acceptsEventStream(req)) return streamRun(agent, body.goal, context, res);
    const result = await agent.run(body.goal, context);
    refuseUnreadableQuota(result, res);
    res.status(200).json(result);
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
