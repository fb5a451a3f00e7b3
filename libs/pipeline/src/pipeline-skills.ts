import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { SkillError, SkillInvocation, SkillRegistry } from '@zmodu/skills';
import { ProposalPipeline } from './proposal-pipeline';
import { PIPELINE_MODULE_OPTIONS } from './pipeline.module-definition';
import { PipelineModuleOptions } from './pipeline.options';
import { InvalidProposalException } from './exceptions/proposal.exceptions';

/** approval.submit and approval.request (propose): hand work to the pipeline, and through it to humans. */
@Injectable()
export class PipelineSkills implements OnModuleInit {
  constructor(
    private readonly pipeline: ProposalPipeline,
    private readonly registry: SkillRegistry,
    @Inject(PIPELINE_MODULE_OPTIONS) private readonly options: PipelineModuleOptions,
  ) {}

  onModuleInit(): void {
    if (this.options.registerSkills === false) return;
    this.registry.register({
      name: 'approval.submit',
      action: 'propose',
      source: 'PipelineModule',
      description:
        'Propose an action for staged execution: risk review, then human approval when needed, then execution. ' +
        'Returns the verdict (executed, needs_human, risk_rejected, ...) and the proposal id.',
      parameters: {
        type: 'object',
        properties: {
          action: { type: 'string', minLength: 1, maxLength: 200, description: 'The action to execute, e.g. order.submit' },
          payload: { type: 'object', description: 'What the action needs' },
          amount: { type: 'number', minimum: 0, description: 'The amount at stake, for risk rules and approval chains' },
        },
        required: ['action', 'payload'],
        additionalProperties: false,
      },
      handler: (args, ctx) => this.submit(ctx, args.action as string, args.payload, args.amount as number | undefined),
    });
    this.registry.register({
      name: 'approval.request',
      action: 'propose',
      source: 'PipelineModule',
      requiredPermission: 'approval:decide',
      description: 'Ask for an approval through the application approval chain (subject and amount); escalations enter the human queue.',
      parameters: {
        type: 'object',
        properties: { subject: { type: 'string', minLength: 1, maxLength: 500 }, amount: { type: 'number', minimum: 0 } },
        required: ['subject', 'amount'],
        additionalProperties: false,
      },
      handler: (args, ctx) => this.submit(ctx, 'approval.request', { subject: args.subject }, args.amount as number),
    });
  }

  private async submit(ctx: SkillInvocation, action: string, payload: unknown, amount: number | undefined) {
    if (!ctx.tenantId || !ctx.userId) throw new SkillError('proposer_required', 'A proposal needs a tenant and a user in the context.');
    try {
      return await this.pipeline.submit({ tenantId: ctx.tenantId, userId: ctx.userId, runId: ctx.runId }, { action, payload, amount });
    } catch (err) {
      if (err instanceof InvalidProposalException) throw new SkillError('invalid_proposal', err.message, { field: err.field });
      throw err;
    }
  }
}
