import { NormalizedMcpServer } from './mcp-server-options';

/** Shorter query values and header-value words are not looked for (too likely to be ordinary words). */
const MIN_SECRET_PART = 8;

/**
 * The server as logs and errors name it: the command without its arguments (they may hold a key), or the URL's
 * origin and path (never its query, user info or the headers).
 */
export function describeServer(server: NormalizedMcpServer): string {
  if (server.transport === 'stdio') return `stdio: ${server.command}`;
  const url = server.url as URL;
  return `${url.origin}${url.pathname}`;
}

/** Longest HTTP error body quoted in a cause. */
const MAX_BODY_QUOTED = 500;
/** An operating-system or undici error code (ECONNREFUSED, UND_ERR_SOCKET), as fetch's cause carries it. */
const NETWORK_CODE = /^(E[A-Z]+|UND_ERR_[A-Z_]+)$/;

/**
 * An error's message and, for a network failure, its code (fetch says only 'fetch failed'), without the secrets of
 * the server entry: fetch, undici and the server itself may echo the URL, its query or a header value. The SDK's
 * wrapper of a failed era probe is left out for the failure itself (`fetch failed: ECONNREFUSED`), and an HTTP error
 * of the SDK says what the server answered (its body, cut).
 */
export function describeCause(err: unknown, server: NormalizedMcpServer): string {
  const failure = probeFailureOf(err) ?? err;
  // Duck-typed: an error may come from another realm (node's fetch), where instanceof Error fails.
  let message = typeof (failure as Error)?.message === 'string' ? (failure as Error).message : String(failure);
  const code = networkCode(failure);
  if (code && !message.includes(code)) message = `${message}: ${code}`;
  const body = (failure as { data?: { text?: unknown } })?.data?.text;
  if (typeof body === 'string' && body.trim() && !message.includes(body.trim()))
    message = `${message}: ${body.trim().slice(0, MAX_BODY_QUOTED)}${body.trim().length > MAX_BODY_QUOTED ? '...' : ''}`;
  return redact(message, server);
}

/** The failure under the SDK's "Version negotiation probe failed" (ERA_NEGOTIATION_FAILED with a cause), or undefined. */
function probeFailureOf(err: unknown): unknown {
  const e = err as { code?: unknown; cause?: unknown; data?: unknown } | null;
  return e?.code === 'ERA_NEGOTIATION_FAILED' && e.cause !== undefined && !(e.data && typeof e.data === 'object' && 'status' in e.data)
    ? e.cause
    : undefined;
}

/** The first network code in the error's cause chain (a few levels deep). */
function networkCode(err: unknown): string | undefined {
  let at = err as { code?: unknown; cause?: unknown } | null | undefined;
  for (let depth = 0; at && depth < 4; depth++, at = at.cause as typeof at) {
    if (typeof at.code === 'string' && NETWORK_CODE.test(at.code)) return at.code;
  }
  return undefined;
}

/**
 * `text` with the secrets of the server entry replaced: the full URL by its origin and path, its query (and each
 * query value) and every header and env value by '[redacted]', as is each long word of a header value (the token
 * of 'Bearer <token>').
 */
export function redact(text: string, server: NormalizedMcpServer): string {
  let out = server.url ? text.split(server.url.href).join(describeServer(server)) : text;
  for (const secret of secretsOf(server)) out = out.split(secret).join('[redacted]');
  return out;
}

function secretsOf(server: NormalizedMcpServer): string[] {
  const secrets = new Set<string>();
  const url = server.url;
  if (url?.search) {
    secrets.add(url.search);
    secrets.add(url.search.slice(1));
    for (const value of url.searchParams.values()) if (value.length >= MIN_SECRET_PART / 2) secrets.add(value);
    for (const raw of url.search.slice(1).split('&')) {
      const value = raw.slice(raw.indexOf('=') + 1);
      if (value.length >= MIN_SECRET_PART / 2) secrets.add(value);
    }
  }
  for (const part of [url?.username, url?.password]) if (part) secrets.add(part);
  for (const value of [...Object.values(server.headers), ...Object.values(server.env ?? {})]) {
    if (value) secrets.add(value);
    for (const word of value.split(/\s+/)) if (word.length >= MIN_SECRET_PART) secrets.add(word);
  }
  // Longest first: a value that contains another is replaced whole.
  return [...secrets].filter(Boolean).sort((a, b) => b.length - a.length);
}
