import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as nest from '@nestjs/common';
import { ArgumentsHost, BadRequestException, HttpException, Logger } from '@nestjs/common';
import * as adminPublic from '@zmodu/admin';
import * as adminInternal from '@zmodu/admin/internal';
import * as agentPublic from '@zmodu/agent';
import * as agentInternal from '@zmodu/agent/internal';
import * as dataPublic from '@zmodu/data';
import * as dataInternal from '@zmodu/data/internal';
import * as dbPublic from '@zmodu/db';
import * as dbInternal from '@zmodu/db/internal';
import * as guardPublic from '@zmodu/guard';
import * as guardInternal from '@zmodu/guard/internal';
import * as httpPublic from '@zmodu/http';
import * as httpInternal from '@zmodu/http/internal';
import * as mcpPublic from '@zmodu/mcp';
import * as mcpInternal from '@zmodu/mcp/internal';
import * as memoryPublic from '@zmodu/memory';
import * as memoryInternal from '@zmodu/memory/internal';
import * as outboxPublic from '@zmodu/outbox';
import * as outboxInternal from '@zmodu/outbox/internal';
import * as pipelinePublic from '@zmodu/pipeline';
import * as pipelineInternal from '@zmodu/pipeline/internal';
import * as skillsPublic from '@zmodu/skills';
import * as skillsInternal from '@zmodu/skills/internal';
import * as core from '@zmodu/core';
import { prefersRespondAsync } from '../runs/agent-runs.controller';
import { resolveHttpOptions } from '../zmodu-http.options';
import { LIBRARY_HTTP_ERRORS } from './library-errors';
import { ZmoduExceptionFilter } from './zmodu-exception.filter';

const LIBS_DIR = join(__dirname, '..', '..', '..');
// Each library's exceptions: those of its entry point and those of its internal entry (boot and configuration errors).
const admin = { ...adminPublic, ...adminInternal };
const agent = { ...agentPublic, ...agentInternal };
const data = { ...dataPublic, ...dataInternal };
const db = { ...dbPublic, ...dbInternal };
const guard = { ...guardPublic, ...guardInternal };
const http = { ...httpPublic, ...httpInternal };
const mcp = { ...mcpPublic, ...mcpInternal };
const memory = { ...memoryPublic, ...memoryInternal };
const outbox = { ...outboxPublic, ...outboxInternal };
const pipeline = { ...pipelinePublic, ...pipelineInternal };
const skills = { ...skillsPublic, ...skillsInternal };
const LIBRARIES = { core, admin, agent, data, db, guard, http, mcp, memory, outbox, pipeline, skills } as const;

type ErrorClass = abstract new (...args: never[]) => Error;
const isHttpExceptionClass = (value: unknown) => typeof value === 'function' && value.prototype instanceof HttpException;

/** Every class a library exports that is an Error (but Nest's HttpExceptions, which carry their own status). */
function exportedErrorClasses(): Map<string, { library: string; type: ErrorClass }> {
  const found = new Map<string, { library: string; type: ErrorClass }>();
  for (const [library, exports] of Object.entries(LIBRARIES))
    for (const value of Object.values(exports))
      if (typeof value === 'function' && value.prototype instanceof Error && !isHttpExceptionClass(value) && value !== core.ZmoduError)
        // A class re-exported by another package (guard re-exports core's OptionalPeerUnavailableException) stays its declarer's.
        if (!found.has(value.name)) found.set(value.name, { library, type: value as ErrorClass });
  return found;
}

/** Every `class X extends ...Error|...Exception` in the libraries' sources (but specs, fixtures, testing, Nest's HttpExceptions). */
function declaredErrorClasses(): Map<string, string> {
  const found = new Map<string, string>();
  for (const library of readdirSync(LIBS_DIR)) {
    const src = join(LIBS_DIR, library, 'src');
    let files: string[];
    try {
      files = readdirSync(src, { recursive: true }) as string[];
    } catch {
      continue;
    }
    for (const file of files) {
      if (!file.endsWith('.ts') || /\.(db-)?spec\.ts$/.test(file) || /(^|\/)(__fixtures__|testing)\//.test(file)) continue;
      const text = readFileSync(join(src, file), 'utf8');
      for (const [, name, base] of text.matchAll(/\bclass (\w+) extends (\w*(?:Error|Exception))\b/g))
        if (!isHttpExceptionClass((nest as Record<string, unknown>)[base]) && name !== 'ZmoduError') found.set(name, library);
    }
  }
  return found;
}

/** An error of a library's internal class (not exported), as it is thrown: its name and own fields. */
const internal = (name: string, message: string, fields: Record<string, unknown> = {}) =>
  Object.assign(new Error(message), { name, ...fields });

interface Case {
  readonly error: Error;
  readonly status: number;
  /** The body's own fields beyond statusCode, code and message (4xx), exactly. */
  readonly fields?: Record<string, unknown>;
  /** The Retry-After header, when there is one. */
  readonly retryAfter?: string;
}
const c = (error: Error, status: number, extra: Omit<Case, 'error' | 'status'> = {}): Case => ({ error, status, ...extra });
const current = { status: 'approved', version: 2, step: null };

/** One case per exception class of every library: what the edge answers for it. */
const CASES: Record<string, Case> = {
  // @zmodu/db
  EmbeddedDatabaseError: c(new db.EmbeddedDatabaseError({ message: 'syntax error at or near "x"', code: '42601' }), 500),
  EmbeddedDatabaseLockedException: c(new db.EmbeddedDatabaseLockedException('held by pid 7', '/data', '/data.lock', null), 503, {
    retryAfter: '5',
  }),
  EmbeddedDatabaseVersionException: c(new db.EmbeddedDatabaseVersionException('holds data of PostgreSQL 17', '/data', '17', '18'), 500),
  PgPackageUnavailableException: c(new db.PgPackageUnavailableException('A PostgreSQL server connection', true), 500),
  SlotsTakenError: c(new db.SlotsTakenError(4), 429, { retryAfter: '1' }),
  // @zmodu/guard
  InvalidPolicyException: c(new guard.InvalidPolicyException('allow must be an array'), 500),
  InvalidGuardOptionsException: c(new guard.InvalidGuardOptionsException('Invalid guard options: auditStore: expected ...'), 500),
  InvalidRedactionOptionsException: c(new guard.InvalidRedactionOptionsException('patterns'), 500),
  OptionalPeerUnavailableException: c(new core.OptionalPeerUnavailableException('openai', 'the OpenAI provider', 'openai@^7', true), 500),
  DataSourceMissingException: c(new core.DataSourceMissingException('MemoryModule.forRoot({ store })', 'the memory notes', true), 500),
  // @zmodu/skills
  DuplicateSkillException: c(new skills.DuplicateSkillException('a.b', 'One', 'Two'), 500),
  UnknownSkillException: c(new skills.UnknownSkillException('a.b'), 404, { fields: { skill: 'a.b' } }),
  SkillError: c(new skills.SkillError('order_not_found', 'No order 7.'), 422, { fields: { reason: 'order_not_found' } }),
  InvalidSkillDefinitionException: c(new skills.InvalidSkillDefinitionException('a.b', 'no handler'), 500),
  InvalidSkillContextException: c(new skills.InvalidSkillContextException('no guard'), 500),
  // @zmodu/data
  DataException: c(new data.DataException('bad'), 500),
  InvalidDataOptionsException: c(new data.InvalidDataOptionsException('limits'), 500),
  InvalidIdentifierException: c(new data.InvalidIdentifierException('bad name'), 500),
  SqlParserNotLoadedException: c(new data.SqlParserNotLoadedException('loading'), 503, { retryAfter: '1' }),
  TenantFenceError: c(new data.TenantFenceError('role'), 500),
  FenceMissingException: c(new data.FenceMissingException('no fence', ['role missing']), 500),
  DataModelHazardException: c(new data.DataModelHazardException('hazards', []), 500),
  SqlRefusal: c(new data.SqlRefusal('not_select', 'Only SELECT.'), 400, { fields: { reason: 'not_select' } }),
  // @zmodu/outbox
  WebhookDeliveryException: c(new outbox.WebhookDeliveryException('HTTP 500 from https://hooks.internal/x'), 502),
  InvalidChannelException: c(new outbox.InvalidChannelException('url'), 500),
  InvalidOutboxEventException: c(new outbox.InvalidOutboxEventException(), 400),
  InvalidCommandException: c(new outbox.InvalidCommandException('handler'), 500),
  InvalidOutboxOptionsException: c(new outbox.InvalidOutboxOptionsException('OutboxModule.forRoot({ store }): expected ...'), 500),
  InvalidRelayOptionsException: c(new outbox.InvalidRelayOptionsException('leaseMs'), 500),
  OutboxConflictException: c(new outbox.OutboxConflictException('e1', 'pending'), 409, { fields: { eventId: 'e1', status: 'pending' } }),
  InvalidOutboxQueryException: c(new outbox.InvalidOutboxQueryException('limit', 'limit must be 1 to 100'), 400, {
    fields: { field: 'limit' },
  }),
  RelayCrash: c(new outbox.RelayCrash('after claim'), 500),
  CommandEventMissingException: c(new outbox.CommandEventMissingException('order.cancel'), 500),
  DuplicateTopicHandlerException: c(new outbox.DuplicateTopicHandlerException('order.cancelled'), 500),
  ChannelNeedsOutboxException: c(new outbox.ChannelNeedsOutboxException('ops'), 500),
  // @zmodu/memory
  InvalidMemoryEntryException: c(new memory.InvalidMemoryEntryException('content is empty'), 400),
  MemoryFullException: c(new memory.MemoryFullException('acme', 'alice', 200), 429, { fields: { maxNotesPerUser: 200 } }),
  InvalidMemoryOptionsException: c(new memory.InvalidMemoryOptionsException('store'), 500),
  InvalidMemoryScopeException: c(new memory.InvalidMemoryScopeException('tenantId is missing'), 403),
  InvalidMemoryQueryException: c(new memory.InvalidMemoryQueryException('limit'), 400),
  MemoryErasedException: c(new memory.MemoryErasedException('acme', 'alice'), 409),
  // @zmodu/pipeline
  StagedCallFailed: c(internal('StagedCallFailed', 'denied_staged'), 500),
  ProposalNotFoundException: c(new pipeline.ProposalNotFoundException('p1'), 404, { fields: { proposalId: 'p1' } }),
  PipelineCannotStartException: c(new pipeline.PipelineCannotStartException(['no executor']), 500),
  InvalidProposalException: c(new pipeline.InvalidProposalException('reason', 'reason is missing'), 400, { fields: { field: 'reason' } }),
  AmountSourceMissingException: c(new pipeline.AmountSourceMissingException(), 500),
  InvalidPipelineOptionsException: c(new pipeline.InvalidPipelineOptionsException('executors'), 500),
  ApprovalForbiddenException: c(new pipeline.ApprovalForbiddenException('not yours to decide'), 403),
  ProposalConflictException: c(new pipeline.ProposalConflictException('approved', 'moved on', current), 409, {
    fields: { status: 'approved', current },
  }),
  ProposalEditRefusedException: c(new pipeline.ProposalEditRefusedException('too big'), 422, { fields: { field: null } }),
  // @zmodu/agent
  ScriptExhaustedError: c(new agent.ScriptExhaustedError(2, 2), 500),
  AgentNotFoundException: c(new agent.AgentNotFoundException('nobody', ['trader']), 404, { fields: { agent: 'nobody' } }),
  MailboxFullException: c(new agent.MailboxFullException(100, 7), 429, { retryAfter: '7' }),
  McpSkillNameTakenException: c(new agent.McpSkillNameTakenException('s', 't', 's.t', 'Other'), 500),
  InvalidAgentSpecException: c(new agent.InvalidAgentSpecException('trader', 'no guard'), 500),
  InvalidWorkerOptionsException: c(new agent.InvalidWorkerOptionsException('concurrency', 'must be 1 to 64'), 500),
  RunJournalConflictException: c(new agent.RunJournalConflictException('run-1', 3), 500),
  RunJournalStoppedException: c(new agent.RunJournalStoppedException('the run was taken over', true), 500),
  PolicyHealthException: c(new agent.PolicyHealthException('inert'), 500),
  InvalidJobsOptionsException: c(new agent.InvalidJobsOptionsException('store', 'unknown'), 500),
  InvalidMcpServerOptionsException: c(new agent.InvalidMcpServerOptionsException(0, 'x', 'url'), 500),
  McpConnectError: c(internal('McpConnectError', 'spawn ./server ENOENT'), 503, { retryAfter: '5' }),
  McpServerUnavailableException: c(new agent.McpServerUnavailableException(['files: spawn /opt/x ENOENT']), 503, { retryAfter: '5' }),
  McpUnavailableError: c(internal('McpUnavailableError', 'reconnecting', { retryAfterMs: 2500 }), 503, { retryAfter: '3' }),
  InvalidGoalException: c(new agent.InvalidGoalException('the goal is empty'), 400),
  McpClientSdkMissingException: c(new agent.McpClientSdkMissingException('npm install @modelcontextprotocol/client'), 500),
  SchedulePackageUnavailableException: c(
    new agent.SchedulePackageUnavailableException('@AgentCron', 'is not installed: npm install @nestjs/schedule@^12'),
    500,
  ),
  // @zmodu/mcp
  InvalidMcpOptionsException: c(new mcp.InvalidMcpOptionsException('path'), 500),
  McpSdkMissingException: c(new mcp.McpSdkMissingException('npm install @modelcontextprotocol/server'), 500),
  // @zmodu/http
  InvalidHttpOptionsException: c(new http.InvalidHttpOptionsException('resolveCaller', 'must be a function'), 500),
  CallerContextMissingException: c(new http.CallerContextMissingException(), 500),
  // @zmodu/admin
  InvalidAdminSkillsOptionsException: c(new admin.InvalidAdminSkillsOptionsException('config', 'keys'), 500),
  InvalidConfigWriteException: c(new admin.InvalidConfigWriteException('no tenant'), 400),
  ConfigKeyImmutableException: c(new admin.ConfigKeyImmutableException('orders.max'), 403, { fields: { key: 'orders.max' } }),
  ConfigVersionConflictException: c(new admin.ConfigVersionConflictException('orders.max', 1, 2), 409, {
    fields: { key: 'orders.max', expectedVersion: 1, currentVersion: 2 },
  }),
  ConfigKeyUndeclaredException: c(new admin.ConfigKeyUndeclaredException('nope'), 404, { fields: { key: 'nope' } }),
  InvalidConfigValueException: c(new admin.InvalidConfigValueException('orders.max', ['must be an integer']), 400, {
    fields: { key: 'orders.max', problems: ['must be an integer'] },
  }),
  AgentModuleMissingException: c(new admin.AgentModuleMissingException(), 500),
  InvalidConsoleOptionsException: c(new admin.InvalidConsoleOptionsException('title', 'too long'), 500),
  InvalidAuditFilterException: c(new admin.InvalidAuditFilterException('since', 'since must be a date'), 400, {
    fields: { field: 'since' },
  }),
  CallerNotCheckedException: c(new admin.CallerNotCheckedException(), 500),
  InvalidMetricsOptionsException: c(new admin.InvalidMetricsOptionsException('path', 'bad'), 500),
  AuditTenantForbiddenException: c(new admin.AuditTenantForbiddenException(), 403),
};

/** A minimal express-like host: what the filter sent. */
function host(url = '/agents/x/runs') {
  const sent: { status?: number; body?: unknown; headers: Record<string, string> } = { headers: {} };
  const res = {
    headersSent: false,
    setHeader: (name: string, value: string) => (sent.headers[name.toLowerCase()] = value),
    status(code: number) {
      sent.status = code;
      return this;
    },
    json(body: unknown) {
      sent.body = body;
      return this;
    },
  };
  const h = {
    getType: () => 'http',
    switchToHttp: () => ({ getRequest: () => ({ originalUrl: url, headers: {} }), getResponse: () => res }),
  } as unknown as ArgumentsHost;
  return { host: h, sent };
}

describe('the exception filter maps every exception of every library to its status', () => {
  const declared = declaredErrorClasses();
  const exported = exportedErrorClasses();
  const unexpected = jest.spyOn(ZmoduExceptionFilter.prototype as unknown as { unexpected: () => void }, 'unexpected');
  beforeAll(() => jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined));
  afterEach(() => unexpected.mockClear());

  it('knows every exception class the libraries declare, and every one they export (a new class without a mapping fails here)', () => {
    expect(declared.size).toBeGreaterThan(70);
    const names = (m: ReadonlyMap<string, unknown>) => [...m.keys()].sort();
    expect(names(declared)).toEqual(names(LIBRARY_HTTP_ERRORS));
    expect(names(declared)).toEqual(Object.keys(CASES).sort());
    // Every exported one is declared in a library's sources (and so mapped), under the library that declares it.
    for (const [name, { library }] of exported) expect([name, declared.get(name)]).toEqual([name, library]);
    for (const [name, library] of declared) expect([name, LIBRARY_HTTP_ERRORS.get(name)?.library]).toEqual([name, library]);
  });

  it("has every exception a library exports derive from ZmoduError, with a stable code (but EmbeddedDatabaseError: PostgreSQL's own)", () => {
    const own: Record<string, string> = { SkillError: 'SkillFailed', SlotsTakenError: 'slots_taken' };
    let checked = 0;
    for (const [name] of exported) {
      const { error } = CASES[name];
      if (name === 'EmbeddedDatabaseError') {
        expect(core.ZmoduError.isZmoduError(error)).toBe(false);
        continue;
      }
      expect([name, error instanceof core.ZmoduError, core.ZmoduError.isZmoduError(error)]).toEqual([name, true, true]);
      expect([name, (error as core.ZmoduError).code]).toEqual([name, Object.hasOwn(own, name) ? own[name] : name]);
      checked++;
    }
    expect(checked).toBeGreaterThan(70);
    expect(core.ZmoduError.isZmoduError(new Error('x'))).toBe(false);
    expect(core.ZmoduError.isZmoduError({ name: 'AgentNotFoundException', code: 'AgentNotFoundException' })).toBe(false);
  });

  it.each(Object.entries(CASES))('%s', (name, { error, status, fields, retryAfter }) => {
    expect(error.name).toBe(name);
    const exportedClass = exported.get(name);
    if (exportedClass) expect(error).toBeInstanceOf(exportedClass.type);
    const { host: h, sent } = host();
    new ZmoduExceptionFilter().catch(error, h);
    expect(sent.status).toBe(status);
    expect(sent.headers['retry-after']).toBe(retryAfter);
    const body = sent.body as Record<string, unknown>;
    expect(body).toMatchObject({ statusCode: status, code: name });
    if (status < 500) {
      // A client's error: the library's message (written for the caller), and exactly the fields named.
      const { statusCode: _s, code: _c, message, ...rest } = body;
      expect(message).toBe(error.message);
      expect(rest).toEqual(fields ?? {});
      expect(unexpected).not.toHaveBeenCalled();
    } else {
      // The server's: nothing of the exception's text leaves (it is logged), a request id to find it by.
      expect(JSON.stringify(body)).not.toContain(error.message);
      expect(body.requestId).toEqual(expect.any(String));
      // A fault of the server's configuration or code is logged with its stack; an outage is not.
      expect(unexpected).toHaveBeenCalledTimes(status === 500 ? 1 : 0);
    }
  });
});

describe('ZmoduExceptionFilter on what is not a library exception', () => {
  const unexpected = jest.spyOn(ZmoduExceptionFilter.prototype as unknown as { unexpected: () => void }, 'unexpected');
  beforeAll(() => jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined));
  afterEach(() => unexpected.mockReset());

  it('keeps an HttpException as it is, a string body as { statusCode, message }', () => {
    const a = host();
    new ZmoduExceptionFilter().catch(new BadRequestException({ message: 'id must be a UUID', field: 'id' }), a.host);
    expect([a.sent.status, a.sent.body]).toEqual([400, { message: 'id must be a UUID', field: 'id' }]);
    const b = host();
    new ZmoduExceptionFilter().catch(new HttpException('slow down', 429), b.host);
    expect([b.sent.status, b.sent.body]).toEqual([429, { statusCode: 429, message: 'slow down' }]);
  });

  it('answers a database that cannot be reached 503 with Retry-After (the option), whatever wraps the error', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    for (const err of [
      refused,
      { name: 'QueryFailedError', message: 'x', driverError: { code: '57P01' } },
      new Error('PGlite pool has ended'),
    ]) {
      const { host: h, sent } = host();
      new ZmoduExceptionFilter(undefined, { retryAfterSeconds: 9, requestId: () => 'req-0001' }).catch(err, h);
      expect([sent.status, sent.headers['retry-after'], sent.body]).toEqual([
        503,
        '9',
        { statusCode: 503, message: 'The database is unavailable: retry in 9 seconds.', requestId: 'req-0001' },
      ]);
    }
    expect(unexpected).not.toHaveBeenCalled();
  });

  it('answers anything else 500 { statusCode, message: "Internal error", requestId }, logged once, nothing of it shown', () => {
    const { host: h, sent } = host();
    new ZmoduExceptionFilter(undefined, { requestId: () => 'req-boom-1' }).catch(new TypeError('secret internals at db.ts:42'), h);
    expect([sent.status, sent.body]).toEqual([500, { statusCode: 500, message: 'Internal error', requestId: 'req-boom-1' }]);
    expect(unexpected).toHaveBeenCalledTimes(1);
  });

  it("keeps a body parser's 4xx (malformed JSON) naming the body", () => {
    const parser = Object.assign(new SyntaxError('Unexpected end of JSON input'), {
      status: 400,
      expose: true,
      type: 'entity.parse.failed',
    });
    const { host: h, sent } = host();
    new ZmoduExceptionFilter().catch(parser, h);
    expect([sent.status, sent.body]).toEqual([400, { statusCode: 400, message: 'Unexpected end of JSON input', field: 'body' }]);
  });

  it("answers a body parser's 4xx that Nest wrapped in an HttpException the same way, naming the body", () => {
    for (const [parser, wrapped] of [
      [
        Object.assign(new SyntaxError('Unexpected end of JSON input'), { status: 400, expose: true, type: 'entity.parse.failed' }),
        (cause: Error) => new BadRequestException(cause.message, { cause }),
      ],
      [
        Object.assign(new Error('request entity too large'), { status: 413, statusCode: 413, expose: true, type: 'entity.too.large' }),
        (cause: Error) => new HttpException(cause.message, 413, { cause }),
      ],
    ] as const) {
      const { host: h, sent } = host();
      new ZmoduExceptionFilter().catch(wrapped(parser), h);
      expect([sent.status, sent.body]).toEqual([parser.status, { statusCode: parser.status, message: parser.message, field: 'body' }]);
    }
    // An HttpException of the application's own keeps its body, whatever its cause.
    const { host: h, sent } = host();
    new ZmoduExceptionFilter().catch(new BadRequestException({ message: 'mine', extra: 1 }, { cause: new Error('x') }), h);
    expect(sent.body).toEqual({ message: 'mine', extra: 1 });
  });

  it('redacts every body: a key in a library message is masked', () => {
    const key = `sk-proj-${'a1B2c3D4'.repeat(6)}`;
    const { host: h, sent } = host();
    new ZmoduExceptionFilter().catch(new agent.InvalidGoalException(`tenant key ${key}`), h);
    expect(sent.status).toBe(400);
    expect(JSON.stringify(sent.body)).not.toContain(key);
  });

  it('answers on mcpPath as a JSON-RPC error with the same status', () => {
    const { host: h, sent } = host('/MCP/?x=1');
    new ZmoduExceptionFilter(undefined, { mcpPath: '/mcp' }).catch(new agent.MailboxFullException(1, 3), h);
    expect([sent.status, sent.headers['retry-after'], sent.body]).toEqual([
      429,
      '3',
      { jsonrpc: '2.0', id: null, error: { code: -32000, message: expect.stringMatching(/mailbox/i) } },
    ]);
  });

  it('refuses options that cannot work, naming the field', () => {
    expect(() => new ZmoduExceptionFilter(undefined, { retryAfterSeconds: 0 })).toThrow(/retryAfterSeconds must be a whole number/);
    expect(() => new ZmoduExceptionFilter(undefined, { mcpPath: 'mcp' })).toThrow(/mcpPath must be a path starting with '\/'/);
    expect(() => resolveHttpOptions({ resolveCaller: 'user' as never })).toThrow(/resolveCaller must be a function/);
    expect(() => resolveHttpOptions({ runPermission: ' ' })).toThrow(/runPermission must be a non-empty permission code/);
    expect(() => resolveHttpOptions({ maxGoalLength: 0 })).toThrow(/maxGoalLength must be a whole number/);
    expect(() => resolveHttpOptions({ runsWait: 'sometimes' as never })).toThrow(/runsWait must be 'prefer', 'always' or 'never'/);
    expect(resolveHttpOptions({ runPermission: null }).runPermission).toBeNull();
    expect(resolveHttpOptions({}).runsWait).toBe('prefer');
  });

  it("reads RFC 7240's Prefer: respond-async among other preferences and their parameters, in any case", () => {
    expect(prefersRespondAsync('respond-async')).toBe(true);
    expect(prefersRespondAsync('wait=10, Respond-Async; x=1')).toBe(true);
    expect(prefersRespondAsync(['return=minimal', 'respond-async'])).toBe(true);
    expect(prefersRespondAsync('return=minimal')).toBe(false);
    expect(prefersRespondAsync('respond-asynchronously')).toBe(false);
    expect(prefersRespondAsync('x=respond-async')).toBe(false);
    expect(prefersRespondAsync(undefined)).toBe(false);
  });
});
