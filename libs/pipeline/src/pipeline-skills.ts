import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { defineSkill, SkillError, SkillInvocation, SkillRegistry } from '@zmodu/skills';
import { InvalidProposalException } from './exceptions/invalid-proposal.exception';
import { PIPELINE_OPTIONS } from './pipeline.constants';
import { APPROVAL_RECORD_ACTION, ResolvedPipelineOptions } from './pipeline.options';
import { ProposalPipeline } from './proposal-pipeline';

/**
 * approval.submit and approval.request (propose): hand work to the pipeline, and through it to
 * humans; and approval.record, the staged skill an approved approval.request executes.
 */
/** The arguments of approval.request, and of the staged action that records its approval (the same request). */
const APPROVAL_REQUEST_PARAMETERS = {
  type: 'object',
  properties: { subject: { type: 'string', minLength: 1, maxLength: 500 }, amount: { type: 'number', minimum: 0, maximum: 1e15 } },
  required: ['subject', 'amount'],
  additionalProperties: false,
} as const;

@Injectable()
export class PipelineSkills implements OnModuleInit {
  constructor(
    private readonly pipeline: ProposalPipeline,
    private readonly registry: SkillRegistry,
    @Inject(PIPELINE_OPTIONS) private readonly options: ResolvedPipelineOptions,
  ) {}

  onModuleInit(): void {
    if (!this.options.registerSkills) return;
    const proposable = this.options.proposable;
    const replays = typeof this.pipeline.store.findByRun === 'function';
    this.registry.register(
      defineSkill({
        name: 'approval.submit',
        action: 'propose',
        // A run retried after its process died may submit again: the store answers the run's first proposal (findByRun).
        idempotent: replays,
        source: 'PipelineModule',
        description:
          `Propose an action for staged execution: ${proposable.length ? proposable.join(', ') : '(none is proposable)'}. ` +
          "The payload is the action's arguments; the application computes the amount at stake. Risk review, then human approval when needed, then execution. " +
          'Returns the verdict (executed, needs_human, execute_not_permitted, risk_rejected, propose_refused) and the proposal id.',
        parameters: {
          type: 'object',
          properties: {
            action: {
              type: 'string',
              ...(proposable.length ? { enum: [...proposable] } : { minLength: 1, maxLength: 200 }),
              description: 'The action to execute',
            },
            payload: { type: 'object', description: "The action's arguments" },
          },
          required: ['action', 'payload'],
          additionalProperties: false,
        } as const,
        handler: (args, ctx) => {
          const action = args.action;
          if (!proposable.includes(action))
            throw new SkillError(
              'not_proposable',
              `'${action}' cannot be proposed here: the proposable actions are ${proposable.join(', ') || 'none'}.`,
            );
          return this.submit(ctx, action, args.payload);
        },
      }),
    );
    this.registry.register(
      defineSkill({
        name: 'approval.request',
        action: 'propose',
        // A run retried after its process died may submit again: the store answers the run's first proposal (findByRun).
        idempotent: replays,
        source: 'PipelineModule',
        requiredPermission: 'approval:decide',
        description: 'Ask for an approval through the application approval chain (subject and amount); escalations enter the human queue.',
        parameters: APPROVAL_REQUEST_PARAMETERS,
        // A request for approval always waits for a human: its amount is what the request asks (bound into the approval),
        // not a number to trust.
        handler: (args, ctx) => this.submit(ctx, APPROVAL_RECORD_ACTION, { subject: args.subject, amount: args.amount }, false),
      }),
    );
    this.registry.register(
      defineSkill({
        name: APPROVAL_RECORD_ACTION,
        action: 'execute',
        staged: true,
        source: 'PipelineModule',
        requiredPermission: 'approval:decide',
        description: 'Record an approval asked for with approval.request (run by the pipeline once approved).',
        parameters: APPROVAL_REQUEST_PARAMETERS,
        handler: (args, ctx) => ({ approved: true, subject: args.subject, amount: args.amount, approvers: ctx.staged?.approvers ?? [] }),
      }),
    );
  }

  private async submit(ctx: SkillInvocation, action: string, payload: unknown, mayExecute = ctx.guard.evaluate('execute', action).allowed) {
    if (!ctx.tenantId || !ctx.userId) throw new SkillError('proposer_required', 'A proposal needs a tenant and a user in the context.');
    // mayExecute: the proposer's own policy; an agent that may not execute the action gets a human, whatever the risk.
    try {
      return await this.pipeline.submit(
        { tenantId: ctx.tenantId, userId: ctx.userId, permissions: ctx.permissions, runId: ctx.runId, agent: ctx.agent, mayExecute },
        { action, payload },
      );
    } catch (err) {
      if (err instanceof InvalidProposalException) throw new SkillError('invalid_proposal', err.message, { field: err.field });
      throw err;
    }
  }
}
