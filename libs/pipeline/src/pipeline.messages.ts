export const PROPOSAL_NOT_FOUND_MESSAGE = (id: string) => `No proposal ${id}.`;

export const EXECUTORS_GONE_MESSAGE = () =>
  "PipelineModule: `executors` is gone: a staged action is a skill. Declare @Skill({ name, action: 'execute', staged: true, parameters, requiredPermission }) " +
  'with a handler that writes through ctx.staged.transaction, and list it under actions with its amount function.';

export const ACTIONS_SHAPE_MESSAGE = () => 'PipelineModule: actions must be { [stagedSkillName]: { amount? } }.';

export const AMOUNT_NOT_A_FUNCTION_MESSAGE = (action: string) =>
  `PipelineModule: actions['${action}'].amount must be a function (payload, ctx) => number.`;

export const PIPELINE_CANNOT_START_MESSAGE = (problems: readonly string[]) => `PipelineModule cannot start:\n- ${problems.join('\n- ')}`;

export const NO_DATABASE_TO_READ_MESSAGE = () =>
  'no database to read from: an amount function needs the TypeORM DataSource (PipelineModule was given a store and no DataSource)';

export const ALREADY_DECIDED_MESSAGE = () =>
  'Separation of duties: you already decided a step of this proposal; another person must decide the next.';

export const PROPOSER_DECIDES_MESSAGE = () => 'Separation of duties: the proposer may not decide their own proposal.';

export const STEP_PERMISSION_MESSAGE = (step: number, name: string, permission: string) =>
  `Step ${step + 1} (${name}) needs the permission ${permission}.`;

export const PROPOSAL_CHANGED_MESSAGE = (id: string, version: number, read: number) =>
  `Proposal ${id} changed since you read it (version ${version} now, you read ${read}): read it again.`;

export const PROPOSAL_ALREADY_MESSAGE = (id: string, status: string) => `Proposal ${id} is already ${status}.`;

export const STEP_NOT_WAITING_MESSAGE = (id: string, step: number, waiting: number | null) =>
  `Step ${step} of proposal ${id} is not the one waiting (step ${waiting ?? 'none'} is).`;

export const PROPOSAL_CHANGED_WHILE_DECIDING_MESSAGE = (id: string) => `Proposal ${id} changed while you decided: read it again.`;

export const EDIT_CANNOT_APPLY_MESSAGE = (reason: string) => `The edited payload cannot apply: ${reason}.`;

export const EDIT_RISK_REJECTED_MESSAGE = (reason: string) => `The edited payload is rejected by the risk review: ${reason}.`;

// What is wrong with the input of a proposal, a decision or a query (InvalidProposalException names the field).

export const PROPOSER_TENANT_MISSING_MESSAGE = () => 'a proposal needs the tenant of its proposer';

export const PROPOSER_USER_MISSING_MESSAGE = () => 'a proposal needs its proposer (user id)';

export const PROPOSER_PERMISSIONS_MISSING_MESSAGE = () =>
  "a proposal needs the proposer's permissions (an array of permission codes): the action runs with them";

export const ACTION_MISSING_MESSAGE = () => 'action must be a non-empty string (the action to execute, e.g. order.submit)';

export const AMOUNT_GIVEN_MESSAGE = () =>
  'a proposal carries no amount: the application computes it (the amount function of the action in the pipeline options)';

export const PAYLOAD_TOO_BIG_MESSAGE = (maxBytes: number) => `payload must be JSON of at most ${maxBytes} bytes`;

export const ID_NOT_UUID_MESSAGE = () => 'id must be a UUID';

export const APPROVER_MISSING_MESSAGE = () => 'a decision needs the tenant, user and permissions of the approver';

/** A proposer's or an approver's tenant or user id that scopeIdProblem refuses (the problem names the field). */
export const INVALID_CALLER_ID_MESSAGE = (problem: string) => `${problem} (the caller's ids come from its authentication: fix them there)`;

export const DECISION_SHAPE_MESSAGE = () => 'a decision needs { decision, reason, version, step }';

export const DECISION_KIND_MESSAGE = () => "decision must be 'approve' or 'reject'";

export const REASON_MESSAGE = () => 'reason must be a non-empty string of at most 1000 characters: say why';

export const VERSION_MESSAGE = () => 'version must be the version of the proposal you read (a whole number from 1)';

export const STEP_MESSAGE = () => 'step must be the index of the waiting step you decide (waitingStep.index as read)';

export const EDIT_ON_REJECT_MESSAGE = () => 'only an approval can carry an edited payload';

export const PREVIEW_PAYLOAD_MESSAGE = () => 'payload is required: the edited payload to preview';

export const PAGE_MESSAGE = () => 'page must be a whole number from 1';

export const LIMIT_MESSAGE = () => 'limit must be a whole number from 1 to 100';

export const STATUS_MESSAGE = (statuses: readonly string[]) => `status must be one of ${statuses.join(', ')}`;

// Who approves: the approval chains and the default steps (checked at boot).

export const CHAINS_SHAPE_MESSAGE = () =>
  "PipelineModule: approval.chains must be { [action]: [{ minAmount, steps: [{ name, permission }] }, ...] } (e.g. { 'ticket.close': [{ minAmount: 0, steps: [{ name: 'support lead', permission: 'ticket:approve' }] }] }).";

export const CHAIN_RULE_MESSAGE = (action: string, index: number) =>
  `PipelineModule: approval.chains['${action}'][${index}] must be { minAmount: a number >= 0, steps: [{ name, permission }, ...] }.`;

export const APPROVAL_STEP_MESSAGE = (where: string, index: number) =>
  `PipelineModule: ${where} step ${index} must be { name, permission } with non-empty strings: the permission is what its approver must hold.`;

export const DEFAULT_STEPS_MESSAGE = () =>
  "PipelineModule: approval.defaultSteps must be a non-empty array of { name, permission }: the steps of a proposal that waits for a human and that no chain rule covers (default [{ name: 'approver', permission: 'approval:decide' }]).";

const describeSteps = (steps: readonly { name: string; permission: string }[]) =>
  steps.map((s) => `${s.name} (${s.permission})`).join(', then ');

export const NO_CHAIN_WARNING = (actions: readonly string[], steps: readonly { name: string; permission: string }[]) =>
  `${actions.map((a) => `'${a}'`).join(', ')} can wait for a human (a risk escalation, or a proposer that may not execute it) ` +
  `and ${actions.length === 1 ? 'has' : 'have'} no approval chain: ${actions.length === 1 ? 'its' : 'their'} approvals take the default step ${describeSteps(steps)}. ` +
  `Declare approval.chains: { '${actions[0]}': [{ minAmount: 0, steps: [{ name, permission }] }] } to say who approves, ` +
  'or approval.defaultSteps to make the default your choice.';

export const CHAIN_GAP_WARNING = (action: string, from: number, steps: readonly { name: string; permission: string }[]) =>
  `the approval chain of '${action}' starts at minAmount ${from}: a proposal of a smaller amount that waits for a human ` +
  `(a proposer that may not execute it) takes the default step ${describeSteps(steps)}. ` +
  `Add a rule with minAmount: 0 to approval.chains['${action}'], or declare approval.defaultSteps to make the default your choice.`;
