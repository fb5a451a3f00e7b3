import {
  DATABASE_UNAVAILABLE_MESSAGE,
  NOT_READY_MESSAGE,
  TOOL_SERVER_UNAVAILABLE_MESSAGE,
  UPSTREAM_FAILED_MESSAGE,
} from '../http.messages';

/**
 * How the HTTP edge answers one exception class of the libraries. A client error (4xx) shows the exception's message
 * (the libraries write it for the caller: it says what to do) and the `fields` named here; a server error (5xx) shows
 * `message` instead and is logged. Every field named is in the body, `null` when the exception has none.
 */
export interface HttpErrorMapping {
  /** The library that throws it (@zmodu/<library>). */
  readonly library: string;
  readonly status: number;
  /** Own fields of the exception that the body shows beside statusCode, code and message (4xx only). */
  readonly fields?: readonly string[];
  /**
   * The seconds of `Retry-After`: from the exception (e.g. MailboxFullException's retryAfterSeconds), or the
   * filter's `retryAfterSeconds` (default 5) when this returns undefined. Only for 429 and 503.
   */
  readonly retryAfter?: (exception: Readonly<Record<string, unknown>>) => number | undefined;
  /**
   * A 5xx says this instead of the exception's message (logged with it). Without it, a 500 is a server fault:
   * logged with its stack as unexpected, answered SERVER_FAULT_MESSAGE with the request id.
   */
  readonly message?: (retryAfterSeconds: number) => string;
}

const client =
  (library: string) =>
  (status: number, fields?: readonly string[]): HttpErrorMapping => ({ library, status, ...(fields ? { fields } : {}) });
/** A fault of the server's configuration or code: 500, nothing of it shown, logged with its stack. */
const fault = (library: string): HttpErrorMapping => ({ library, status: 500 });
const unavailable = (
  library: string,
  message: (seconds: number) => string,
  retryAfter?: HttpErrorMapping['retryAfter'],
): HttpErrorMapping => ({ library, status: 503, message, ...(retryAfter ? { retryAfter } : {}) });
const seconds = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.min(3600, Math.ceil(value)) : undefined;

const db = client('db');
const skills = client('skills');
const data = client('data');
const outbox = client('outbox');
const memory = client('memory');
const pipeline = client('pipeline');
const agent = client('agent');
const admin = client('admin');

/**
 * Every exception class of every @zmodu/* library, by its name (each sets `this.name` to its class name), and how
 * the edge answers it. Keyed by name so that the edge needs none of the libraries installed to know their exceptions
 * (an application with @zmodu/agent and @zmodu/http only does not install @zmodu/data). The table test
 * (library-errors.spec.ts) fails when a library gains an exception class that is not here.
 */
export const LIBRARY_HTTP_ERRORS: ReadonlyMap<string, HttpErrorMapping> = new Map<string, HttpErrorMapping>([
  // @zmodu/db. An EmbeddedDatabaseError that says the database is away is a 503 before this table is read.
  ['EmbeddedDatabaseError', fault('db')],
  ['EmbeddedDatabaseLockedException', unavailable('db', DATABASE_UNAVAILABLE_MESSAGE)],
  ['EmbeddedDatabaseVersionException', fault('db')],
  ['PgPackageUnavailableException', fault('db')],
  ['SlotsTakenError', { ...db(429), retryAfter: () => 1 }],
  // @zmodu/guard: boot errors.
  ['InvalidPolicyException', fault('guard')],
  ['InvalidGuardOptionsException', fault('guard')],
  ['InvalidRedactionOptionsException', fault('guard')],
  ['OptionalPeerUnavailableException', fault('core')],
  ['DataSourceMissingException', fault('core')],
  // @zmodu/skills
  ['DuplicateSkillException', fault('skills')],
  ['UnknownSkillException', skills(404, ['skill'])],
  ['SkillError', skills(422, ['reason'])],
  ['InvalidSkillDefinitionException', fault('skills')],
  ['InvalidSkillContextException', fault('skills')],
  // @zmodu/data: boot and configuration errors, but a statement db.query refused.
  ['DataException', fault('data')],
  ['InvalidDataOptionsException', fault('data')],
  ['InvalidIdentifierException', fault('data')],
  ['SqlParserNotLoadedException', unavailable('data', NOT_READY_MESSAGE, () => 1)],
  ['TenantFenceError', fault('data')],
  ['FenceMissingException', fault('data')],
  ['DataModelHazardException', fault('data')],
  ['SqlRefusal', data(400, ['reason'])],

  // @zmodu/outbox
  ['WebhookDeliveryException', { library: 'outbox', status: 502, message: () => UPSTREAM_FAILED_MESSAGE }],
  ['InvalidChannelException', fault('outbox')],
  ['InvalidOutboxEventException', outbox(400)],
  ['InvalidCommandException', fault('outbox')],
  ['InvalidOutboxOptionsException', fault('outbox')],
  ['InvalidRelayOptionsException', fault('outbox')],
  ['OutboxConflictException', outbox(409, ['eventId', 'status'])],
  ['InvalidOutboxQueryException', outbox(400, ['field'])],
  ['RelayCrash', fault('outbox')],
  ['CommandEventMissingException', fault('outbox')],
  ['DuplicateTopicHandlerException', fault('outbox')],
  ['ChannelNeedsOutboxException', fault('outbox')],
  // @zmodu/memory
  ['InvalidMemoryEntryException', memory(400)],
  ['MemoryFullException', memory(429, ['maxNotesPerUser'])],
  ['InvalidMemoryOptionsException', fault('memory')],
  ['InvalidMemoryScopeException', memory(403)],
  ['InvalidMemoryQueryException', memory(400)],
  ['MemoryErasedException', memory(409)],
  // @zmodu/pipeline
  ['StagedCallFailed', fault('pipeline')],
  ['ProposalNotFoundException', pipeline(404, ['proposalId'])],
  ['PipelineCannotStartException', fault('pipeline')],
  ['InvalidProposalException', pipeline(400, ['field'])],
  ['AmountSourceMissingException', fault('pipeline')],
  ['InvalidPipelineOptionsException', fault('pipeline')],
  ['ApprovalForbiddenException', pipeline(403)],
  ['ProposalConflictException', pipeline(409, ['status', 'current'])],
  ['ProposalEditRefusedException', pipeline(422, ['field'])],
  // @zmodu/agent
  ['ScriptExhaustedError', fault('agent')],
  ['AgentNotFoundException', agent(404, ['agent'])],
  ['MailboxFullException', { ...agent(429), retryAfter: (e) => seconds(e.retryAfterSeconds) }],
  ['McpSkillNameTakenException', fault('agent')],
  ['InvalidAgentSpecException', fault('agent')],
  ['InvalidWorkerOptionsException', fault('agent')],
  ['RunJournalConflictException', fault('agent')],
  ['RunJournalStoppedException', fault('agent')],
  ['PolicyHealthException', fault('agent')],
  ['InvalidJobsOptionsException', fault('agent')],
  ['InvalidMcpServerOptionsException', fault('agent')],
  ['McpConnectError', unavailable('agent', TOOL_SERVER_UNAVAILABLE_MESSAGE)],
  ['McpServerUnavailableException', unavailable('agent', TOOL_SERVER_UNAVAILABLE_MESSAGE)],
  [
    'McpUnavailableError',
    unavailable('agent', TOOL_SERVER_UNAVAILABLE_MESSAGE, (e) => seconds(typeof e.retryAfterMs === 'number' ? e.retryAfterMs / 1000 : 0)),
  ],
  ['InvalidGoalException', agent(400)],
  ['McpClientSdkMissingException', fault('agent')],
  ['SchedulePackageUnavailableException', fault('agent')],
  // @zmodu/mcp
  ['InvalidMcpOptionsException', fault('mcp')],
  ['McpSdkMissingException', fault('mcp')],
  // @zmodu/http
  ['InvalidHttpOptionsException', fault('http')],
  ['CallerContextMissingException', fault('http')],
  // @zmodu/admin
  ['InvalidAdminSkillsOptionsException', fault('admin')],
  ['InvalidConfigWriteException', admin(400)],
  ['ConfigKeyImmutableException', admin(403, ['key'])],
  ['ConfigVersionConflictException', admin(409, ['key', 'expectedVersion', 'currentVersion'])],
  ['ConfigKeyUndeclaredException', admin(404, ['key'])],
  ['InvalidConfigValueException', admin(400, ['key', 'problems'])],
  ['AgentModuleMissingException', fault('admin')],
  ['InvalidConsoleOptionsException', fault('admin')],
  ['InvalidAuditFilterException', admin(400, ['field'])],
  ['CallerNotCheckedException', fault('admin')],
  ['InvalidMetricsOptionsException', fault('admin')],
  ['AuditTenantForbiddenException', admin(403)],
]);

/** The mapping of a library exception (by its name, an own key of the table), or undefined. */
export function libraryErrorMapping(exception: unknown): HttpErrorMapping | undefined {
  if (!(exception instanceof Error) || typeof exception.name !== 'string') return undefined;
  return LIBRARY_HTTP_ERRORS.get(exception.name);
}
