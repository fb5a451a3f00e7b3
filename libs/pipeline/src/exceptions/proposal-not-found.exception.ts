import { PROPOSAL_NOT_FOUND_MESSAGE } from '../pipeline.messages';
import { ZmoduError } from '@zmodu/core';

/** No such proposal for this tenant (also the answer for another tenant's proposal: no existence oracle). HTTP: 404. */
export class ProposalNotFoundException extends ZmoduError {
  constructor(readonly proposalId: string) {
    super(PROPOSAL_NOT_FOUND_MESSAGE(proposalId));
    this.name = 'ProposalNotFoundException';
  }
}
