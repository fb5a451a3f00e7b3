import { Injectable, Optional } from '@nestjs/common';
import { Redactor } from '@zmodu/guard';
import { auditDigest } from '@zmodu/guard/internal';
import type { ProposalOutcome, ProposalOutcomes } from '@zmodu/guard/internal';
import { SkillRegistry } from '@zmodu/skills';
import { ProposalPipeline } from './proposal-pipeline';
import type { ProposalRecord } from './proposal.types';

/** The most proposals one read answers (a run waits on the proposals of one turn: at most its tool calls). */
const MAX_OUTCOMES = 256;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * ProposalOutcomes over the pipeline's store (see @zmodu/guard's port): a run that waits on proposals reads them here
 * when it may go on. Each is read for the tenant the run belongs to (another tenant's id is not found, and left out),
 * with the lazy expiry applied first. The model is told the decision as JSON: the status, the reason, and for an
 * executed proposal the payload that ran (an approver may have edited it) and the staged skill's value, redacted.
 */
@Injectable()
export class PipelineProposalOutcomes implements ProposalOutcomes {
  private readonly redactor: Redactor;

  constructor(
    private readonly pipeline: ProposalPipeline,
    private readonly skills: SkillRegistry,
    @Optional() redactor?: Redactor,
  ) {
    this.redactor = redactor ?? new Redactor();
  }

  async outcomes(tenantId: string, proposalIds: readonly string[]): Promise<ProposalOutcome[]> {
    if (!tenantId) return [];
    const ids = [...new Set(proposalIds.filter((id) => typeof id === 'string' && UUID.test(id)))].slice(0, MAX_OUTCOMES);
    if (ids.length === 0) return [];
    await this.pipeline.store.expire(tenantId);
    const out: ProposalOutcome[] = [];
    for (const id of ids) {
      const p = await this.pipeline.store.get(tenantId, id);
      if (p)
        out.push({
          proposalId: p.id,
          status: statusOf(p),
          observation: JSON.stringify(this.redactor.redact(this.told(p))),
          runId: p.runId,
          proposer: p.proposer,
          agent: p.agent,
        });
    }
    return out;
  }

  /**
   * What the model is told: the staged skill's x-sensitive fields of the payload masked, and its value as its audit
   * keeps it (a digest for a skill declared `audit: { result: 'digest' }`), as every other path shows them.
   */
  async expire(tenantId: string, proposalIds: readonly string[]): Promise<void> {
    const ids = proposalIds.filter((id) => typeof id === 'string' && UUID.test(id)).slice(0, MAX_OUTCOMES);
    if (tenantId && ids.length > 0) await this.pipeline.store.expire(tenantId, ids);
  }

  private told(p: ProposalRecord): Record<string, unknown> {
    const last = p.decisions.at(-1);
    const skill = this.skills.get(p.action);
    const payload = skill ? this.redactor.maskSensitive(p.payload, skill.parameters, { count: false }) : p.payload;
    const result = skill?.audit.result === 'digest' ? (auditDigest(p.result ?? null) ?? null) : (p.result ?? null);
    return {
      proposalId: p.id,
      action: p.action,
      decision: statusOf(p),
      ...(p.status === 'executed' ? { payload, result } : {}),
      ...(p.status === 'executed' && p.decisions.some((d) => d.edit) ? { edited: true } : {}),
      ...(last && (p.status === 'rejected' || p.status === 'executed') ? { decidedBy: last.decidedBy, reason: last.reason } : {}),
      ...(p.status === 'failed' ? { reason: p.reason } : {}),
    };
  }
}

function statusOf(p: ProposalRecord): ProposalOutcome['status'] {
  switch (p.status) {
    case 'executed':
    case 'rejected':
    case 'failed':
    case 'expired':
    case 'pending':
    case 'approved':
      return p.status;
    default:
      // 'refused' proposals never wait for a human.
      return 'failed';
  }
}
