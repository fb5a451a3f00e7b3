import type { Proposal, Session } from './types';

/** Why the signed-in user may not decide this proposal now; null when they may (the server checks it again). */
export function whyNotDecide(p: Proposal, s: Session): string | null {
  if (p.status !== 'pending' || !p.waitingStep) return `This proposal is ${p.status}: there is nothing to decide.`;
  if (p.expiresAt && new Date(p.expiresAt).getTime() <= Date.now()) return 'This proposal has expired: it can no longer be decided.';
  if (p.proposer === s.userId) return 'You proposed this: someone else must decide it.';
  const mine = p.decisions.find((d) => d.decidedBy === s.userId);
  if (mine) return `You decided step ${mine.step + 1} already: another person must sign the next step.`;
  const permission = p.waitingStep.permission;
  if (!s.permissions.includes(s.decidePermission)) return `Deciding needs the permission ${s.decidePermission}, which you do not hold.`;
  if (!s.permissions.includes(permission))
    return `The waiting step, ${p.waitingStep.name}, needs the permission ${permission}, which you do not hold.`;
  return null;
}

export function mayDecide(p: Proposal, s: Session): boolean {
  return whyNotDecide(p, s) === null;
}

export function has(s: Session, permission: string): boolean {
  return s.permissions.includes(permission);
}
