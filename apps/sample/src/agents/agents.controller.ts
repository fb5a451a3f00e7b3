import { Body, Controller, Get, HttpCode, NotFoundException, Param, Post, Req, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Agent, AgentRegistry, AgentWorker, clientAbortSignal } from '@zmodu/agent';
import { PolicyHealth, Redactor } from '@zmodu/guard';
import { PERMISSIONS } from '../auth/auth.constants';
import { RequestContext } from '../auth/request-context';
import { RequirePermission } from '../auth/require-permission.decorator';
import { RunGoalDto } from './run-goal.dto';
import { refuseUnreadableQuota } from './quota-outage';
import { acceptsEventStream, streamRun } from './run-event-stream';

@ApiTags('agents')
@ApiBearerAuth()
@Controller('agents')
export class AgentsController {
  constructor(
    private readonly agents: AgentRegistry,
    private readonly context: RequestContext,
    private readonly worker: AgentWorker,
    private readonly redactor: Redactor,
  ) {}

  @Get()
  @RequirePermission(PERMISSIONS.agentRead)
  list() {
    return this.agents.list().map((a) => ({ name: a.name, skills: a.tools().map((t) => t.name), policy: a.spec.guard }));
  }

  /**
   * Run an agent on a goal as the caller; returns the answer, the steps and every tool call with its guard decision.
   * With `Accept: text/event-stream`, the same run as Server-Sent Events (step, delta, final; see streamRun).
   * Either way a client that goes away aborts the run, and with it the model request in flight (clientAbortSignal).
   */
  @Post(':name/runs')
  @HttpCode(200)
  @RequirePermission(PERMISSIONS.agentRun)
  async run(@Param('name') name: string, @Body() body: RunGoalDto, @Req() req: Request, @Res() res: Response): Promise<void> {
    const agent = this.agent(name);
    const context = this.context.runContext();
    if (acceptsEventStream(req)) return streamRun(agent, body.goal, context, res, this.redactor);
    const result = await agent.run(body.goal, { ...context, signal: clientAbortSignal(res) });
    if (res.destroyed) return; // the client went away: nobody to answer
    refuseUnreadableQuota(result, res);
    res.status(200).json(result);
  }

  /**
   * Post a goal to the AgentWorker as the caller: 202 { runId } once it is stored; it runs in the background.
   * A full mailbox is 429 with Retry-After (the edge's exception filter maps MailboxFullException).
   */
  @Post(':name/goals')
  @HttpCode(202)
  @RequirePermission(PERMISSIONS.agentRun)
  async post(@Param('name') name: string, @Body() body: RunGoalDto): Promise<{ runId: string }> {
    const agent = this.agent(name);
    const { tenantId, userId, permissions } = this.context.caller();
    return this.worker.post(body.goal, { agent: agent.name, tenantId, userId, permissions });
  }

  /** A run posted with POST /agents/:name/goals, of the caller's tenant only (another tenant's id is 404). */
  @Get('runs/:id')
  @RequirePermission(PERMISSIONS.agentRun)
  async runRecord(@Param('id') id: string) {
    const run = await this.worker.get(this.context.caller().tenantId, id);
    if (!run) throw new NotFoundException({ statusCode: 404, message: `No run '${id}' in your tenant.` });
    const { tenantId: _tenant, permissions: _permissions, leaseOwner: _owner, leaseUntil: _until, ...shown } = run;
    return shown;
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
