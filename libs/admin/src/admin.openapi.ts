import { applyDecorators } from '@nestjs/common';
import { ApiBadRequestResponse, ApiBearerAuth, ApiForbiddenResponse, ApiQuery, ApiUnauthorizedResponse } from './swagger-decorators';
import type { SchemaObject } from './swagger-decorators';
import { DENIAL_CAUSES } from '@zmodu/guard/internal';

// OpenAPI (3.0, what @nestjs/swagger writes) schemas of the admin endpoints' answers. Internal: the controllers use them.

const nullable = (schema: SchemaObject): SchemaObject => ({ ...schema, nullable: true });
const count: SchemaObject = { type: 'integer', minimum: 0 };
const anyValue: SchemaObject = { description: 'any JSON value' };
const strings: SchemaObject = { type: 'array', items: { type: 'string' } };
const counters = (description: string, names: readonly string[]): SchemaObject => ({
  type: 'object',
  description,
  properties: Object.fromEntries(names.map((k) => [k, count])),
});

/** The body of a 401 or 403: `{ statusCode, message, error }`. */
export const HTTP_ERROR_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['message'],
  properties: { statusCode: { type: 'integer' }, message: { type: 'string' }, error: { type: 'string' } },
};

/** The body of a 400: the message and the parameter or field that is wrong. */
export const FIELD_ERROR_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['message'],
  properties: { message: { type: 'string' }, field: { type: 'string' } },
};

/**
 * What every admin endpoint answers besides its own: 401 without an authenticated caller with a tenant, 403 without
 * the permission; the caller authenticates with a bearer token (the scheme named 'bearer' of the document).
 */
export function ApiAdminEndpoint(permissionOption: string): ClassDecorator & MethodDecorator {
  return applyDecorators(
    ApiBearerAuth(),
    ApiUnauthorizedResponse({ description: 'No authenticated caller with a tenant', schema: HTTP_ERROR_SCHEMA }),
    ApiForbiddenResponse({
      description: `The caller lacks the permission of the \`${permissionOption}\` option`,
      schema: HTTP_ERROR_SCHEMA,
    }),
  );
}

/** A 400 naming the parameter that is wrong. */
export const ApiFieldError = (description = 'A parameter or field is wrong: the answer names it') =>
  ApiBadRequestResponse({ description, schema: FIELD_ERROR_SCHEMA });

/** `?page=&limit=` of a paged list. */
export const ApiPageQuery = (maxLimit = 100) =>
  applyDecorators(
    ApiQuery({ name: 'page', required: false, schema: { type: 'integer', minimum: 1, default: 1 } }),
    ApiQuery({ name: 'limit', required: false, schema: { type: 'integer', minimum: 1, maximum: maxLimit, default: 20 } }),
  );

/** `?tenant=`: only the caller's own tenant may be named (anything else is a 403). */
export const ApiOwnTenantQuery = () =>
  ApiQuery({
    name: 'tenant',
    required: false,
    description: "The caller's own tenant (the default); naming another tenant is a 403",
    schema: { type: 'string' },
  });

const page = (item: SchemaObject): SchemaObject => ({
  type: 'object',
  required: ['items', 'total', 'page', 'limit'],
  properties: { items: { type: 'array', items: item }, total: count, page: { type: 'integer' }, limit: { type: 'integer' } },
});

const approvalStep: SchemaObject = {
  type: 'object',
  required: ['name', 'permission'],
  properties: { name: { type: 'string' }, permission: { type: 'string' } },
};

export const PROPOSAL_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['id', 'tenantId', 'action', 'status', 'version'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    tenantId: { type: 'string' },
    action: { type: 'string', description: 'The staged skill the proposal runs once approved' },
    payload: anyValue,
    amount: nullable({ type: 'number' }),
    proposer: { type: 'string' },
    agent: nullable({ type: 'string' }),
    status: { type: 'string', enum: ['refused', 'rejected', 'pending', 'approved', 'executed', 'failed', 'expired'] },
    verdict: { type: 'string' },
    reason: nullable({ type: 'string' }),
    steps: { type: 'array', items: approvalStep },
    approvals: count,
    version: { type: 'integer', description: 'Name it in a decision: it binds the decision to what you read' },
    waitingStep: nullable({ ...approvalStep, properties: { ...approvalStep.properties, index: { type: 'integer' } } }),
    createdAt: { type: 'string', format: 'date-time' },
    expiresAt: nullable({ type: 'string', format: 'date-time' }),
    executedAt: nullable({ type: 'string', format: 'date-time' }),
    result: anyValue,
    runId: nullable({ type: 'string' }),
    decisions: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          step: { type: 'integer' },
          decidedBy: { type: 'string' },
          decision: { type: 'string', enum: ['approve', 'reject'] },
          reason: { type: 'string' },
          at: { type: 'string', format: 'date-time' },
          version: { type: 'integer' },
          edit: nullable({ type: 'object' }),
        },
      },
    },
  },
};

export const PROPOSAL_PAGE_SCHEMA = page(PROPOSAL_SCHEMA);

export const PIPELINE_OUTCOME_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['verdict', 'proposalId', 'status', 'reason'],
  properties: {
    verdict: { type: 'string', description: 'e.g. executed, needs_human, approved_pending_next_step, rejected_by_human' },
    proposalId: nullable({ type: 'string', format: 'uuid' }),
    status: { type: 'string' },
    reason: nullable({ type: 'string' }),
    field: { type: 'string' },
    result: anyValue,
    waitingFor: { type: 'array', items: approvalStep },
    version: { type: 'integer' },
    amount: nullable({ type: 'number' }),
  },
};

export const DECISION_BODY_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['reason', 'version', 'step'],
  properties: {
    reason: { type: 'string', maxLength: 1000, description: 'Why (non-blank)' },
    version: { type: 'integer', description: 'The version of the proposal you read' },
    step: { type: 'integer', description: 'waitingStep.index of the proposal you read' },
    payload: { description: 'Approve only: an edited payload, validated, re-priced and re-reviewed before it applies' },
  },
};

export const CONFLICT_SCHEMA: SchemaObject = {
  type: 'object',
  properties: {
    message: { type: 'string' },
    status: { type: 'string' },
    current: nullable({
      type: 'object',
      properties: { status: { type: 'string' }, version: { type: 'integer' }, step: { type: 'integer' } },
    }),
  },
};

export const OUTBOX_EVENT_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['id', 'topic', 'status', 'attempts', 'maxAttempts'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    tenantId: nullable({ type: 'string' }),
    topic: { type: 'string' },
    payload: anyValue,
    idempotencyKey: nullable({ type: 'string' }),
    status: { type: 'string', enum: ['pending', 'delivering', 'delivered', 'dead'] },
    attempts: count,
    maxAttempts: { type: 'integer' },
    nextAttemptAt: { type: 'string', format: 'date-time' },
    lastError: nullable({ type: 'string' }),
    createdAt: { type: 'string', format: 'date-time' },
    deliveredAt: nullable({ type: 'string', format: 'date-time' }),
    command: nullable({ type: 'object', properties: { name: { type: 'string' }, argsHash: { type: 'string' } } }),
  },
};

export const OUTBOX_PAGE_SCHEMA = page(OUTBOX_EVENT_SCHEMA);

export const AUDIT_VERDICT_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['ok'],
  properties: {
    ok: { type: 'boolean' },
    entries: { ...count, description: 'ok: the entries of the chain' },
    head: { type: 'string', description: 'ok: the hash of the last entry (hex SHA-256)' },
    firstBadSequence: { type: 'integer', description: 'not ok: the sequence number of the first bad entry' },
    problem: { type: 'string', enum: ['altered', 'deleted', 'inserted', 're-linked'] },
  },
};

const guardCounters = counters("The guard's counters across the agent's runs: allowed calls and denials by cause", [
  'allowed',
  'denied',
  ...DENIAL_CAUSES,
]);

const runCounters: SchemaObject = {
  type: 'object',
  description: "The agent's run counters on this instance",
  properties: {
    runs: count,
    steps: count,
    toolCalls: count,
    toolDenied: { type: 'object', additionalProperties: count, description: 'Refused tool calls by cause' },
    toolDeniedTotal: count,
    toolErrors: count,
    tokensIn: count,
    tokensOut: count,
    durationMs: { type: 'number' },
  },
};

const policyHealth: SchemaObject = {
  type: 'object',
  description: 'The auditPolicy report of the policy against the skill registry',
  properties: {
    inert: { type: 'boolean' },
    unknownTools: strings,
    classDeniedTools: strings,
    hasClassBlindSpot: { type: 'boolean' },
    effectiveTools: strings,
  },
};

/** AgentWorker.stats(): its counters, and the unhandled rejections the cluster mode's process net saw. */
const workerCounters: SchemaObject = (() => {
  const base = counters("The background worker's counters on this instance (null when the worker is off)", [
    'queued',
    'running',
    'succeeded',
    'failed',
    'interrupted',
    'rejected',
    'handlerErrors',
    'waiting',
    'resumed',
  ]);
  const unhandledRejections = counters(
    'Unhandled rejections seen in this process: contained (a lost database) and raised (anything else)',
    ['contained', 'raised'],
  );
  return { ...base, properties: { ...base.properties, unhandledRejections } };
})();

export const AGENTS_REPORT_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['agents', 'worker'],
  properties: {
    agents: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'skills', 'policy', 'health', 'needsAttention', 'counters'],
        properties: {
          name: { type: 'string' },
          skills: { ...strings, description: 'The skills offered to the model' },
          policy: {
            type: 'object',
            properties: {
              allow: strings,
              deny: strings,
              allowExecute: { type: 'boolean' },
              budget: nullable({ type: 'number' }),
            },
          },
          budget: nullable({ type: 'object', description: 'The agent budget (tokens per run, per period, per user)' }),
          health: policyHealth,
          needsAttention: { type: 'boolean', description: 'The policy is inert, has a class blind spot or lists unknown skills' },
          counters: { type: 'object', properties: { guard: guardCounters, runs: runCounters } },
        },
      },
    },
    worker: nullable(workerCounters),
  },
};

export const QUOTA_REPORT_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['tenantId', 'currentPeriod', 'items'],
  properties: {
    tenantId: { type: 'string' },
    currentPeriod: { type: 'string', description: "The quota's current period: '2026-11-30' (day), '2026-11' (month) or 'total'" },
    items: {
      type: 'array',
      items: {
        type: 'object',
        required: ['agent', 'period', 'tokens', 'limit', 'remaining', 'users'],
        properties: {
          agent: { type: 'string' },
          period: { type: 'string' },
          tokens: count,
          limit: nullable({ ...count, description: "The tenant's limit per period for the agent; null: unlimited" }),
          remaining: nullable(count),
          userLimit: nullable({ ...count, description: 'What one user may spend per period (fair use); null: no share applies' }),
          users: {
            type: 'array',
            items: { type: 'object', properties: { userId: { type: 'string' }, tokens: count } },
          },
        },
      },
    },
  },
};

export const SKILLS_JSON_SCHEMA: SchemaObject = {
  type: 'array',
  items: {
    type: 'object',
    required: ['name', 'description', 'action', 'requiredPermission', 'tenantScoped', 'timeoutMs', 'parameters'],
    properties: {
      name: { type: 'string' },
      description: { type: 'string' },
      action: { type: 'string', enum: ['read', 'propose', 'execute'] },
      requiredPermission: nullable({ type: 'string' }),
      tenantScoped: { type: 'boolean' },
      timeoutMs: { type: 'integer' },
      parameters: { type: 'object', description: 'The JSON Schema of the arguments' },
    },
  },
};

export const OPENAPI_DOCUMENT_SCHEMA: SchemaObject = {
  type: 'object',
  description: 'An OpenAPI 3.1 document: one POST operation per skill the caller may see',
  required: ['openapi', 'info', 'paths'],
  properties: { openapi: { type: 'string' }, info: { type: 'object' }, paths: { type: 'object' } },
};

const AUDIT_RECORD_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['id', 'at', 'runId', 'skill', 'action', 'decision', 'outcome'],
  properties: {
    id: { type: 'string', description: 'Decimal: the order of the audit' },
    at: { type: 'string', format: 'date-time' },
    tenantId: nullable({ type: 'string' }),
    userId: nullable({ type: 'string' }),
    agent: nullable({ type: 'string' }),
    runId: { type: 'string' },
    skill: { type: 'string' },
    action: { type: 'string' },
    decision: { type: 'string', enum: ['allowed', 'denied'] },
    cause: nullable({ type: 'string' }),
    outcome: { type: 'string' },
    durationMs: { type: 'number' },
    tokens: count,
    proposalId: nullable({ type: 'string' }),
    approvers: nullable(strings),
    args: { description: 'The arguments of the call, redacted (sensitive fields masked)' },
    result: { description: 'The result of the call, redacted' },
  },
};

export const AUDIT_PAGE_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['entries', 'nextCursor'],
  properties: {
    entries: { type: 'array', items: AUDIT_RECORD_SCHEMA },
    nextCursor: nullable({ type: 'string', description: 'Give it back as ?cursor= for the next page; null on the last page' }),
  },
};

const filterQuery = (name: string, description: string, schema: SchemaObject = { type: 'string', maxLength: 200 }) =>
  ApiQuery({ name, required: false, description, schema });

/** The filters of GET /admin/audit (see parseAuditExport). */
export const ApiAuditFilters = (kinds: readonly string[], maxLimit: number) =>
  applyDecorators(
    filterQuery('kind', 'How the call ended', { type: 'string', enum: [...kinds] }),
    filterQuery('decision', "The guard's decision", { type: 'string', enum: ['allowed', 'denied'] }),
    filterQuery('skill', 'Only this skill'),
    filterQuery('agent', 'Only this agent'),
    filterQuery('run', 'Only this run id'),
    filterQuery('user', 'Only this user'),
    filterQuery('since', 'From this ISO 8601 date or date-time (inclusive)', { type: 'string', format: 'date-time' }),
    filterQuery('until', 'Up to this ISO 8601 date or date-time (inclusive)', { type: 'string', format: 'date-time' }),
    filterQuery('limit', 'Rows of the page', { type: 'integer', minimum: 1, maximum: maxLimit, default: 100 }),
    filterQuery('cursor', 'The nextCursor of the page before', { type: 'string', pattern: '^[0-9]{1,19}$' }),
    filterQuery('format', 'json (the default) or csv; without it, Accept: text/csv gives CSV', { type: 'string', enum: ['json', 'csv'] }),
  );

/** The body of POST /admin/approvals/:id/preview. */
export const PREVIEW_BODY_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['version', 'payload'],
  properties: {
    version: { type: 'integer', minimum: 1, description: 'The version of the proposal you read' },
    payload: { type: 'object', description: "The edited payload (the action's arguments)" },
  },
};

/** What an approval with an edited payload would do (nothing written). */
export const EDIT_PREVIEW_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['ok'],
  properties: {
    ok: { type: 'boolean', description: 'false: the edit cannot apply (reason, field)' },
    amount: nullable({ type: 'number', description: 'The amount the application computes for the edited payload' }),
    previousAmount: nullable({ type: 'number' }),
    steps: { type: 'array', items: approvalStep, description: 'The chain that starts again for the edited payload' },
    extraSteps: { type: 'array', items: approvalStep, description: 'Steps of that chain the current one does not have' },
    restarts: { type: 'boolean', description: 'Always true: an edit is signed again from the first step, by others' },
    risk: {
      type: 'object',
      properties: { verdict: { type: 'string', enum: ['approve', 'escalate'] }, reason: nullable({ type: 'string' }) },
    },
    reason: { type: 'string', description: 'ok false: why the edit cannot apply' },
    field: { type: 'string', description: 'ok false: the payload field that is wrong, when one is' },
  },
};

/** GET /admin/approvals/:id/schema. */
export const ACTION_SCHEMA_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['action', 'description', 'schema'],
  properties: {
    action: { type: 'string' },
    description: { type: 'string' },
    schema: { type: 'object', description: "The JSON Schema of the action's payload (its staged skill's parameters)" },
  },
};

const toolCall: SchemaObject = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    arguments: anyValue,
    decision: { type: 'string', enum: ['allowed', 'denied'] },
    cause: nullable({ type: 'string' }),
    outcome: { type: 'string' },
    ok: { type: 'boolean' },
    durationMs: { type: 'number' },
  },
};

/** GET /admin/approvals/:id/run: the agent run that made the proposal, and its audited calls. */
export const PROPOSAL_RUN_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['runId', 'run', 'calls'],
  properties: {
    runId: nullable({ type: 'string' }),
    run: nullable({
      type: 'object',
      description: 'The run as the worker stored it (null when it ran outside the worker)',
      properties: {
        id: { type: 'string' },
        agent: { type: 'string' },
        goal: { type: 'string' },
        status: { type: 'string' },
        answer: nullable({ type: 'string' }),
        stoppedReason: nullable({ type: 'string' }),
        createdAt: { type: 'string', format: 'date-time' },
        startedAt: nullable({ type: 'string', format: 'date-time' }),
        finishedAt: nullable({ type: 'string', format: 'date-time' }),
        steps: {
          type: 'array',
          items: {
            type: 'object',
            properties: { index: { type: 'integer' }, text: { type: 'string' }, toolCalls: { type: 'array', items: toolCall } },
          },
        },
        waitingFor: { type: 'array', items: { type: 'string' }, description: "A waiting run's proposals (empty once it went on)" },
        waitUntil: nullable({ type: 'string', format: 'date-time' }),
        decisions: {
          type: 'array',
          description: 'The decisions the run was told, as the pipeline held them',
          items: { type: 'object', properties: { proposalId: { type: 'string' }, status: { type: 'string' } } },
        },
        proposedAtStep: nullable({
          type: 'integer',
          description: 'The step that made this proposal: the steps after it are what the agent did after the decision',
        }),
      },
    }),
    calls: { type: 'array', items: AUDIT_RECORD_SCHEMA, description: "The run's audited calls in the caller's tenant, oldest first" },
  },
};
