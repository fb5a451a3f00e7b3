import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  BadRequestException,
  Controller,
  Get,
  HttpCode,
  Inject,
  NotFoundException,
  NotImplementedException,
  Optional,
  Param,
  Post,
  Query,
  Req,
  Res,
  ServiceUnavailableException,
} from '@nestjs/common';
import { Agent, AgentRegistry, AgentWorker } from '@zmodu/agent';
import { clientAbortSignal } from '@zmodu/agent';
import type { AgentRunRecord, AgentRunResult } from '@zmodu/agent';
import { Redactor } from '@zmodu/guard';
import { CallerContext, RequireCallerWithOption } from '../caller/http-caller.guard';
import type { HttpCallerContext } from '../caller/http-caller';
import { ZmoduExceptionFilter } from '../errors/zmodu-exception.filter';
import { ZMODU_HTTP_OPTIONS } from '../http.constants';
import { NO_WORKER_HTTP_MESSAGE, RUN_NOT_FOUND_MESSAGE } from '../http.messages';
import { printable } from '../printable';
import type { ResolvedHttpOptions } from '../zmodu-http.options';
import { JsonGoalBody, type RunGoalBody, RunGoalPipe } from './goal-body.pipe';
import { OpenApi } from './openapi';
import { refuseUnreadableQuota } from './quota-outage';
import { followRun, lastEventId, MAX_FOLLOWERS, MAX_FOLLOWERS_PER_TENANT } from './run-follow';
import { acceptsEventStream, agentRun, type RunAnswer, type RunGoal, streamRun } from './run-event-stream';

const GOAL_BODY_SCHEMA = {
  type: 'object',
  required: ['goal'],
  additionalProperties: false,
  properties: { goal: { type: 'string', minLength: 1, maxLength: 4000, description: 'What the agent is asked to do (free text)' } },
};

/** Journal entries a run's read answers by default, and at most (`journalLimit`). */
const JOURNAL_PAGE = 200;
const MAX_JOURNAL_PAGE = 1000;

/** The journal page's query parameters in the OpenAPI document (both routes that read a run). */
const JOURNAL_PAGE_DOCS: Array<Parameters<typeof OpenApi>[number]> = [
  (api) =>
    api.ApiQuery({
      name: 'journalAfter',
      required: false,
      description: 'Journal entries after this seq (default: from the first)',
      schema: { type: 'integer', minimum: -1 },
    }),
  (api) =>
    api.ApiQuery({
      name: 'journalLimit',
      required: false,
      description: `Journal entries at most (default ${JOURNAL_PAGE}, at most ${MAX_JOURNAL_PAGE}); journalNext names the next page`,
      schema: { type: 'integer', minimum: 1, maximum: MAX_JOURNAL_PAGE },
    }),
  (api) => api.ApiBadRequestResponse({ description: 'journalAfter or journalLimit is not a whole number in its range' }),
];

/** The response a run writes to: Node's (express's Response is one; fastify's reply has it as `raw`). */
type RunResponse = ServerResponse & { raw?: ServerResponse };
const nodeResponse = (res: RunResponse): ServerResponse => res.raw ?? res;

/**
 * The agent runs over HTTP, as the caller (the caller contract: HttpCallerGuard, `runPermission`): served by
 * `ZmoduHttpModule.forRoot({ runsController: true })`. Every route is scoped to the caller's tenant; the tenant, the
 * user and the permissions are the caller's, never the body's. Library exceptions are left to the exception filter
 * (an unknown agent is 404, a full mailbox 429 with Retry-After, a database away 503 with Retry-After).
 */
@OpenApi(
  (api) => api.ApiTags('agents'),
  (api) => api.ApiBearerAuth(),
  (api) => api.ApiUnauthorizedResponse({ description: 'No authenticated caller' }),
  (api) => api.ApiForbiddenResponse({ description: 'The caller has no tenant, or lacks the run permission' }),
)
@RequireCallerWithOption('runPermission')
@Controller('agents')
export class AgentRunsController {
  constructor(
    private readonly agents: AgentRegistry,
    private readonly redactor: Redactor,
    @Inject(ZMODU_HTTP_OPTIONS) private readonly options: ResolvedHttpOptions,
    /** AgentWorkerModule's: without it, the background routes answer 501 (the synchronous run needs none). */
    @Optional() private readonly backgroundWorker?: AgentWorker,
  ) {}

  /** Runs this instance follows as event streams now (GET /agents/runs/:id/events), at most MAX_FOLLOWERS, and per tenant. */
  private followers = 0;
  private readonly followersOf = new Map<string, number>();
  /** Aborted at shutdown: the open event streams end (their clients reconnect elsewhere with Last-Event-ID). */
  private readonly closing = new AbortController();

  beforeApplicationShutdown(): void {
    this.closing.abort();
  }

  /**
   * Run an agent on a goal as the caller: the answer, the steps and every tool call with its guard decision. With
   * `Accept: text/event-stream`, the same run as Server-Sent Events (step, delta, final or error). Either way a client
   * that goes away aborts the run, and with it the model request in flight.
   */
  @Post(':name/runs')
  @HttpCode(200)
  @OpenApi(
    (api) =>
      api.ApiOperation({ summary: 'Run an agent on a goal as the caller (JSON, or Server-Sent Events with Accept: text/event-stream)' }),
    (api) => api.ApiBody({ schema: GOAL_BODY_SCHEMA }),
    (api) => api.ApiProduces('application/json', 'text/event-stream'),
    (api) => api.ApiOkResponse({ description: 'The run: answer, stoppedReason, steps (tool calls with their guard decisions), metrics' }),
    (api) => api.ApiBadRequestResponse({ description: 'The body is not { goal } with a goal of free text' }),
    (api) => api.ApiNotFoundResponse({ description: 'No agent of that name' }),
    (api) =>
      api.ApiServiceUnavailableResponse({ description: 'The token quota or the database cannot be reached: retry after Retry-After' }),
  )
  async run(
    @Param('name') name: string,
    @JsonGoalBody(RunGoalPipe) body: RunGoalBody,
    @CallerContext() caller: HttpCallerContext,
    @Req() req: IncomingMessage,
    @Res() response: RunResponse,
  ): Promise<void> {
    const agent = this.agents.get(name);
    const res = nodeResponse(response);
    const scope = { tenantId: caller.tenantId, userId: caller.userId, permissions: caller.permissions };
    const retry = this.options.retryAfterSeconds;
    // With the AgentWorker, and the caller's preference (runsWait), the run is stored (its record, its journal) and may
    // wait for a human: then 202.
    const worker = this.backgroundWorker && this.storesRun(req) ? this.backgroundWorker : undefined;
    // The stored run's id, sent first (the X-Run-Id header, on an error too; a stream's error event names it): a
    // caller whose answer is lost reads the run instead of posting the goal again.
    let storedId: string | undefined;
    const run: RunGoal = worker
      ? async (signal, onEvent) => {
          const { result, ...record } = await worker.run(body.goal, {
            ...scope,
            agent: agent.name,
            signal,
            ...(onEvent ? { onEvent } : {}),
            onStored: (id) => {
              storedId = id;
              if (!res.headersSent) res.setHeader('X-Run-Id', id);
            },
          });
          // A run that goes on without the caller: the id of its last journal entry, for GET /agents/runs/:id/events
          // (null when it cannot be read now: the answer does not fail on it).
          const open = record.status !== 'succeeded' && record.status !== 'failed';
          const seen = open
            ? await worker.journal(caller.tenantId, record.id).then(
                (j) => j.at(-1)?.seq,
                () => undefined,
              )
            : undefined;
          return storedAnswer(record, result, this.redactor, seen);
        }
      : agentRun(agent, body.goal, { ...scope, runId: caller.runId });
    const errorBody = (err: unknown, runId: string | undefined) => this.errorBody(err, runId);
    if (acceptsEventStream(req)) return streamRun(run, () => (worker ? storedId : caller.runId), res, errorBody, retry);
    // An error after the run was stored keeps its X-Run-Id header: the caller reads the run, never posts it again.
    const answer = await run(clientAbortSignal(res));
    if (res.destroyed) return; // the client went away: nobody to answer
    if (answer.result) refuseUnreadableQuota(answer.result, retry);
    if (answer.status === 202) res.setHeader('Preference-Applied', 'respond-async');
    sendJson(response, answer.status, answer.body);
  }

  /** Post a goal to the AgentWorker as the caller: 202 { runId } once it is stored; it runs in the background. */
  @Post(':name/goals')
  @HttpCode(202)
  @OpenApi(
    (api) => api.ApiOperation({ summary: 'Post a goal to run in the background as the caller (AgentWorker)' }),
    (api) => api.ApiBody({ schema: GOAL_BODY_SCHEMA }),
    (api) => api.ApiAcceptedResponse({ description: 'Stored: { runId }; read it with GET /agents/:name/runs/:id' }),
    (api) => api.ApiBadRequestResponse({ description: 'The body is not { goal } with a goal of free text' }),
    (api) => api.ApiNotFoundResponse({ description: 'No agent of that name' }),
    (api) => api.ApiTooManyRequestsResponse({ description: 'The mailbox is full: retry after Retry-After' }),
  )
  async post(
    @Param('name') name: string,
    @JsonGoalBody(RunGoalPipe) body: RunGoalBody,
    @CallerContext() caller: HttpCallerContext,
  ): Promise<{ runId: string }> {
    const agent = this.agent(name);
    return this.worker.post(body.goal, {
      agent: agent.name,
      tenantId: caller.tenantId,
      userId: caller.userId,
      permissions: caller.permissions,
    });
  }

  /** A background run of the caller's tenant, of any agent (another tenant's id is 404, like an unknown one). */
  @Get('runs/:id')
  @OpenApi(
    (api) =>
      api.ApiOperation({
        summary: "A background run of the caller's tenant: status, answer, steps, error, what it waits for, its journal",
      }),
    (api) => api.ApiOkResponse({ description: 'The run (its tenant, permissions and lease left out)' }),
    ...JOURNAL_PAGE_DOCS,
    (api) => api.ApiNotFoundResponse({ description: "No such run in the caller's tenant" }),
  )
  async runRecord(@Param('id') id: string, @Query() query: Record<string, unknown>, @CallerContext() caller: HttpCallerContext) {
    const page = journalPageOf(query);
    return this.shown(await this.worker.get(caller.tenantId, id), id, caller.tenantId, page);
  }

  /**
   * A stored run of the caller's tenant as Server-Sent Events, from its journal: what it did so far (after
   * `Last-Event-ID`, or `?after=`, when given: EventSource reconnects with it), then what it does, across a wait for a
   * human and the resume on any instance, until `final`. Each event's id is its journal seq.
   */
  @Get('runs/:id/events')
  @OpenApi(
    (api) =>
      api.ApiOperation({
        summary: "Follow a stored run of the caller's tenant as Server-Sent Events (reconnect with Last-Event-ID)",
      }),
    (api) => api.ApiProduces('text/event-stream'),
    (api) => api.ApiOkResponse({ description: 'Events turn, step, waiting, decision (id: the journal seq), then final with the run' }),
    (api) => api.ApiBadRequestResponse({ description: 'Last-Event-ID (or after) is not the id of an event' }),
    (api) => api.ApiNotFoundResponse({ description: "No such run in the caller's tenant" }),
    (api) => api.ApiServiceUnavailableResponse({ description: 'This instance follows as many runs as it may: retry after Retry-After' }),
  )
  async events(
    @Param('id') id: string,
    @Query() query: Record<string, unknown>,
    @CallerContext() caller: HttpCallerContext,
    @Req() req: IncomingMessage,
    @Res() response: RunResponse,
  ): Promise<void> {
    const after = lastEventId(req.headers['last-event-id'], query);
    const worker = this.worker;
    const run = await worker.get(caller.tenantId, id);
    if (!run) throw new NotFoundException({ statusCode: 404, message: RUN_NOT_FOUND_MESSAGE(printable(id)) });
    const ofTenant = this.followersOf.get(caller.tenantId) ?? 0;
    if (this.followers >= MAX_FOLLOWERS || ofTenant >= MAX_FOLLOWERS_PER_TENANT)
      throw new RunFollowersFullException(this.options.retryAfterSeconds, this.followers >= MAX_FOLLOWERS ? 'instance' : 'tenant');
    const res = nodeResponse(response);
    this.followers++;
    this.followersOf.set(caller.tenantId, ofTenant + 1);
    try {
      await followRun(
        worker,
        caller.tenantId,
        run.id,
        after,
        res,
        (r) => this.redactor.redact(this.withoutScope(r)),
        (v) => this.redactor.redact(v),
        this.closing.signal,
      );
    } catch (err) {
      // The stream is open: the failure (a database away) is its last event, as an HTTP error's body.
      if (!res.writableEnded && !res.destroyed) {
        res.write(`event: error\ndata: ${JSON.stringify(this.errorBody(err, run.id))}\n\n`);
        res.end();
      }
    } finally {
      this.followers--;
      const left = (this.followersOf.get(caller.tenantId) ?? 1) - 1;
      if (left > 0) this.followersOf.set(caller.tenantId, left);
      else this.followersOf.delete(caller.tenantId);
    }
  }

  /** The same, of one agent: a run of another agent is 404 too. */
  @Get(':name/runs/:id')
  @OpenApi(
    (api) => api.ApiOperation({ summary: "A background run of this agent in the caller's tenant" }),
    (api) => api.ApiOkResponse({ description: 'The run (its tenant, permissions and lease left out)' }),
    ...JOURNAL_PAGE_DOCS,
    (api) => api.ApiNotFoundResponse({ description: "No such agent, or no such run of it in the caller's tenant" }),
  )
  async agentRunRecord(
    @Param('name') name: string,
    @Param('id') id: string,
    @Query() query: Record<string, unknown>,
    @CallerContext() caller: HttpCallerContext,
  ) {
    const agent = this.agent(name);
    const page = journalPageOf(query);
    const run = await this.worker.get(caller.tenantId, id);
    return this.shown(run?.agent === agent.name ? run : null, id, caller.tenantId, page);
  }

  /** Whether this synchronous run is stored and may wait for a human (runsWait, the request's Prefer). */
  private storesRun(req: IncomingMessage): boolean {
    const mode = this.options.runsWait;
    return mode === 'always' || (mode === 'prefer' && prefersRespondAsync(req.headers.prefer));
  }

  /** The AgentWorker, or a 501 that says what to import. */
  private get worker(): AgentWorker {
    if (!this.backgroundWorker) throw new NotImplementedException(NO_WORKER_HTTP_MESSAGE);
    return this.backgroundWorker;
  }

  /** An unknown agent throws AgentNotFoundException, which the exception filter answers 404. */
  private agent(name: string): Agent {
    return this.agents.get(name);
  }

  /**
   * The run as its tenant reads it, with a page of its journal (docs/worker.md): redacted, its tenant, permissions and
   * lease left out. `journalNext` is the `journalAfter` of the next page (null: this page is the last).
   */
  private async shown(run: AgentRunRecord | null, id: string, tenantId: string, page: { afterSeq: number; limit: number }) {
    if (!run) throw new NotFoundException({ statusCode: 404, message: RUN_NOT_FOUND_MESSAGE(printable(id)) });
    const shown = this.withoutScope(run);
    const journal = await this.worker.journal(tenantId, run.id, page);
    const journalNext = journal.length === page.limit && journal.length > 0 ? journal[journal.length - 1].seq : null;
    return this.redactor.redact({ ...shown, journal, journalNext });
  }

  /** A run as its tenant reads it: its tenant, permissions and lease left out (redacted by the caller). */
  private withoutScope(run: AgentRunRecord) {
    const { tenantId: _tenant, permissions: _permissions, leaseOwner: _owner, leaseUntil: _until, ...shown } = run;
    return shown;
  }

  /** The body of an `error` event: what ZmoduExceptionFilter would answer (redacted, logged the same way). */
  private errorBody(err: unknown, runId: string | undefined): object {
    return new ZmoduExceptionFilter(this.redactor, this.options).answer(err, runId).body;
  }
}

/** Too many runs followed on this instance: a 503 with Retry-After (the exception filter sends it). */
class RunFollowersFullException extends ServiceUnavailableException {
  constructor(
    readonly retryAfterSeconds: number,
    bound: 'instance' | 'tenant',
  ) {
    const what = bound === 'instance' ? `${MAX_FOLLOWERS} runs` : `${MAX_FOLLOWERS_PER_TENANT} runs of your tenant`;
    super({
      statusCode: 503,
      message: `This instance follows ${what} already: retry after ${retryAfterSeconds} s, or read the run with GET /agents/runs/:id`,
    });
    this.name = 'RunFollowersFullException';
  }
}

/** `?journalAfter=<seq>&journalLimit=<n>`, checked: a 400 naming the parameter, never a partial read. */
function journalPageOf(query: Record<string, unknown>): { afterSeq: number; limit: number } {
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = Object.hasOwn(query, name) ? query[name] : undefined;
    if (raw === undefined) return fallback;
    if (typeof raw !== 'string' || !/^-?\d{1,9}$/.test(raw) || Number(raw) < min || Number(raw) > max)
      throw new BadRequestException({
        statusCode: 400,
        message: `${name} must be a whole number from ${min} to ${max}`,
        field: name,
      });
    return Number(raw);
  };
  return { afterSeq: int('journalAfter', -1, -1, 1_000_000_000), limit: int('journalLimit', JOURNAL_PAGE, 1, MAX_JOURNAL_PAGE) };
}

/** Whether a Prefer header (RFC 7240: comma-separated preferences, each maybe with parameters) asks for respond-async. */
export function prefersRespondAsync(header: string | string[] | undefined): boolean {
  const values = typeof header === 'string' ? [header] : Array.isArray(header) ? header : [];
  return values.some((value) => value.split(',').some((pref) => pref.split(';')[0].trim().toLowerCase() === 'respond-async'));
}

/**
 * A stored run's answer: 200 with the agent's result and the run's status once it ended; 202 when it waits for a human
 * (the result so far, `waitingFor` and `waitUntil`) or goes on in the background (`queued`, `interrupted`: read it with
 * GET /agents/runs/:id).
 */
function storedAnswer(record: AgentRunRecord, result: AgentRunResult | undefined, redactor: Redactor, lastSeq?: number): RunAnswer {
  const ended = record.status === 'succeeded' || record.status === 'failed';
  if (ended && result) return { status: 200, body: { ...result, status: record.status }, result };
  const waiting = {
    ...(record.status === 'waiting' ? { waitingFor: record.waitingFor ?? [], waitUntil: record.waitUntil?.toISOString() ?? null } : {}),
    // Where GET /agents/runs/:id/events goes on from (its Last-Event-ID): null when nothing was journaled.
    ...(ended ? {} : { lastEventId: lastSeq ?? null }),
  };
  const body = result
    ? { ...result, status: record.status, ...waiting }
    : (redactor.redact({
        runId: record.id,
        agent: record.agent,
        status: record.status,
        answer: record.answer,
        stoppedReason: record.stoppedReason,
        steps: record.steps,
        pendingApprovals: record.pendingApprovals,
        error: record.error,
        ...waiting,
      }) as object);
  return { status: ended ? 200 : 202, body, ...(result ? { result } : {}), ...(lastSeq !== undefined ? { lastSeq } : {}) };
}

/** A JSON answer on the response handed to the handler: express's `json`, fastify's `send`, or Node's own. */
function sendJson(response: RunResponse, status: number, body: unknown): void {
  const r = response as unknown as {
    status?: (s: number) => { json(b: unknown): unknown };
    code?: (s: number) => { send(b: unknown): unknown };
  };
  if (typeof r.status === 'function' && typeof (response as { json?: unknown }).json === 'function') {
    r.status(status).json(body);
    return;
  }
  if (typeof r.code === 'function') {
    r.code(status).send(body);
    return;
  }
  const res = nodeResponse(response);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.end(JSON.stringify(body));
}
