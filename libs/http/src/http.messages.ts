// The texts of @zmodu/http's answers and boot errors: each says what is wrong and what to do.

/** No caller on the request: the authentication guard did not run or found nobody. */
export const NO_CALLER_MESSAGE = 'No authenticated caller: send the credentials this API expects (e.g. Authorization: Bearer <token>).';

/** The caller has no usable tenant (a 403: authenticated, but no tenant to act in). */
export const CALLER_TENANT_MESSAGE = (problem: string) =>
  `The authenticated caller has no usable tenant (${problem}): the caller must belong to a tenant to use this endpoint.`;

/** The caller's user id or permissions cannot be used (a 403). */
export const CALLER_SCOPE_MESSAGE = (problem: string) => `The authenticated caller cannot be used (${problem}).`;

/** A permission the endpoint needs and the caller lacks (a 403). */
export const MISSING_PERMISSION_MESSAGE = (missing: readonly string[]) =>
  `Missing permission: ${missing.join(', ')}. Ask for credentials that carry it.`;

/** resolveCaller threw: the 401 says so without its text (which stays in the log). */
export const RESOLVE_CALLER_FAILED_MESSAGE = 'The caller of this request could not be established: send valid credentials.';

/** @CallerContext() read on a route whose guard did not check the caller. */
export const CALLER_NOT_CHECKED_MESSAGE =
  '@CallerContext() was read on a route without @RequireCaller() (or HttpCallerGuard): put the guard on the route.';

/** A body of POST /agents/:name/runs or /goals that is not a JSON object. */
export const GOAL_BODY_MESSAGE = 'The body must be a JSON object { "goal": "..." }.';

/** A goal body that is not JSON (a form or text/plain body, which a cross-site form can send): a 415. */
export const GOAL_BODY_MEDIA_TYPE_MESSAGE = 'The body must be JSON: send Content-Type: application/json with { "goal": "..." }.';

/** A field of the goal body that is not `goal`. Tenant and user never come from the body. */
export const GOAL_BODY_FIELD_MESSAGE = (field: string) =>
  ['tenantId', 'userId', 'permissions', 'tenant', 'user'].includes(field)
    ? `${field} is not accepted in the body: the tenant, the user and the permissions are the authenticated caller's.`
    : `property ${field} should not exist: the body is { "goal": "..." }.`;

/** A run of another tenant, of another agent, or no run at all: one answer (no existence oracle). */
export const RUN_NOT_FOUND_MESSAGE = (id: string) => `No run '${id}' in your tenant.`;

/** The answer to an unexpected error (nothing of it leaves the server but the request id). */
export const INTERNAL_ERROR_MESSAGE = 'Internal error';

/** The answer to one of our exceptions that is the server's fault (its configuration or its code). */
export const SERVER_FAULT_MESSAGE = (requestId: string) =>
  `The server cannot answer this request: a fault of its configuration or code, logged with request id ${requestId}. Retrying will not help until it is fixed.`;

/** The database cannot be reached. */
export const DATABASE_UNAVAILABLE_MESSAGE = (seconds: number) => `The database is unavailable: retry in ${seconds} seconds.`;

/** An external MCP server (a tool provider) cannot be reached. */
export const TOOL_SERVER_UNAVAILABLE_MESSAGE = (seconds: number) => `An external tool server is unavailable: retry in ${seconds} seconds.`;

/** The SQL guard is still loading. */
export const NOT_READY_MESSAGE = (seconds: number) => `The server is still starting: retry in ${seconds} seconds.`;

/** AgentWorker.post in an app without a worker. */

/** A webhook delivery failed (an upstream's answer). */
export const UPSTREAM_FAILED_MESSAGE = 'An upstream service did not accept the delivery: it is retried by the outbox.';

/** The token quota could not be read at a model turn: the run stopped (an outage, told as one). */
export const QUOTA_OUTAGE_MESSAGE = (seconds: number) =>
  `The token quota cannot be read (the database is unavailable): retry in ${seconds} seconds.`;

/** A wrong option of ZmoduHttpModule or ZmoduExceptionFilter (a boot error). */
export const INVALID_HTTP_OPTIONS_MESSAGE = (field: string, problem: string) => `ZmoduHttpModule option ${field} ${problem}.`;

export const NO_WORKER_HTTP_MESSAGE = 'This server does not run goals in the background: the application imports no AgentWorkerModule.';
