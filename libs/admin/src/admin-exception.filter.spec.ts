import { HttpException } from '@nestjs/common';
import { OutboxConflictException } from '@zmodu/outbox';
import {
  ApprovalForbiddenException,
  InvalidProposalException,
  ProposalConflictException,
  ProposalEditRefusedException,
  ProposalNotFoundException,
} from '@zmodu/pipeline';
import { adminHttpException } from './admin-exception.filter';
import { RequireAdminPermission } from './require-admin-permission.decorator';

const answer = (err: unknown) => {
  const http = adminHttpException(err) as HttpException;
  return { status: http.getStatus(), body: http.getResponse() };
};

describe('adminHttpException', () => {
  it('answers each pipeline and outbox exception as ZmoduExceptionFilter does: its status, its code, its fields', () => {
    expect(answer(new InvalidProposalException('reason', 'reason is missing'))).toEqual({
      status: 400,
      body: { statusCode: 400, code: 'InvalidProposalException', message: 'reason is missing', field: 'reason' },
    });
    expect(answer(new ProposalNotFoundException('p1'))).toMatchObject({
      status: 404,
      body: { message: 'No proposal p1.', proposalId: 'p1' },
    });
    expect(answer(new ProposalConflictException('approved', 'moved on', { status: 'approved', version: 2, step: null }))).toEqual({
      status: 409,
      body: {
        statusCode: 409,
        code: 'ProposalConflictException',
        message: 'moved on',
        status: 'approved',
        current: { status: 'approved', version: 2, step: null },
      },
    });
    expect(answer(new ProposalEditRefusedException('too big', 'payload/qty'))).toEqual({
      status: 422,
      body: { statusCode: 422, code: 'ProposalEditRefusedException', message: 'too big', field: 'payload/qty' },
    });
    expect(answer(new ApprovalForbiddenException('not yours'))).toMatchObject({ status: 403, body: { message: 'not yours' } });
    expect(answer(new OutboxConflictException('e1', 'pending'))).toMatchObject({ status: 409, body: { eventId: 'e1', status: 'pending' } });
  });

  it('leaves anything else to the other filters', () => {
    expect(adminHttpException(new Error('boom'))).toBeUndefined();
  });
});

describe('@RequireAdminPermission', () => {
  it('refuses an option that names no permission, when applied', () => {
    expect(() => RequireAdminPermission('approval:decide' as never)).toThrow(/name one of the options decidePermission, outboxPermission/);
  });
});
