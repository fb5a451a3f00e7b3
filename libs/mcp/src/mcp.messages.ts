export const NO_PRINCIPAL_MESSAGE = (problem: string) =>
  `Unauthorized: ${problem}. Put McpModule behind the application authentication ` +
  '(a guard that sets req.user to { tenantId, userId, permissions }), or give McpModule a principal(req) resolver.';
export const SESSION_NOT_FOUND_MESSAGE = 'Session not found: initialize a new session (a session belongs to the caller that opened it).';
export const SESSION_ID_REQUIRED_MESSAGE =
  'Bad Request: send the Mcp-Session-Id header of your session, or an initialize request to open one.';
export const SESSION_ID_INVALID_MESSAGE = 'Bad Request: the Mcp-Session-Id header must be one visible-ASCII value.';
export const SESSION_CAP_MESSAGE = (max: number) =>
  `Service Unavailable: the server holds its maximum of ${max} MCP sessions; close one (DELETE) or retry later.`;
export const PRINCIPAL_SESSION_CAP_MESSAGE = (max: number) =>
  `Too Many Requests: you hold the maximum of ${max} open MCP sessions per caller; close one (DELETE) or let one idle out.`;
export const PARSE_ERROR_MESSAGE = 'Parse error: the body must be one JSON-RPC message or a batch (a JSON object or array).';
export const BODY_TOO_LARGE_MESSAGE = (limit: number) =>
  `Payload Too Large: the body is over ${limit} bytes, the limit of the MCP endpoint.`;
export const NO_PRINCIPAL_IN_REQUEST_MESSAGE = 'no principal for this request: the transport must pass one (authInfo.extra.principal)';
export const INVALID_OPTION_MESSAGE = (option: string, rule: string) => `McpModule: option '${option}' ${rule}.`;
export const ORIGIN_FORBIDDEN_MESSAGE =
  "Forbidden: this request's Origin may not call the MCP endpoint (DNS rebinding protection). List the web app's origin in McpModule's allowedOrigins.";
export const HOST_FORBIDDEN_MESSAGE =
  "Forbidden: this request's Host is not one the MCP endpoint answers (DNS rebinding protection). List the names it is served under in McpModule's allowedHosts.";
export const RATE_LIMITED_MESSAGE = (limit: number, windowMs: number, retryAfterSeconds: number) =>
  `Too many requests: at most ${limit} MCP calls per ${Math.round(windowMs / 1000)} s per caller (each call of a batch counts). Retry after ${retryAfterSeconds} s.`;
export const MCP_SDK_MISSING_MESSAGE = (who: string, pkg: string, range: string) =>
  `${who} needs the MCP server SDK, an optional peer dependency of @zmodu/mcp that is not installed: run \`npm install ${pkg}@${range}\`.`;
export const MCP_SDK_TOO_OLD_MESSAGE = (who: string, pkg: string, range: string, missing: readonly string[]) =>
  `${who} needs ${pkg}@${range}; the installed version has no ${missing.join(', ')}: run \`npm install ${pkg}@${range}\`.`;
export const MCP_SDK_BROKEN_MESSAGE = (who: string, pkg: string, cause: string) =>
  `${who} could not load ${pkg} (${cause.split('\n')[0].slice(0, 300)}): reinstall it (\`npm install ${pkg}\`).`;
export const AUDIENCE_MISMATCH_MESSAGE = (resource: string, hadAudience: boolean) =>
  hadAudience
    ? `the token was issued for another resource, not this MCP server: request a token with resource=${resource} (RFC 8707)`
    : `the token names no audience: request a token for this MCP server with resource=${resource} (RFC 8707), and pass its "aud" claim as the principal's audience`;
