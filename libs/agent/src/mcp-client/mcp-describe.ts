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

/**
 * An error's message and, for a network failure, its code (fetch says only 'fetch failed'), without the secrets of
 * the server entry: fetch, undici and the server itself may echo the URL, its query or a header value.
 */
export function describeCause(err: unknown, server: NormalizedMcpServer): string {
  // Duck-typed: an error may come from another realm (node's fetch), where instanceof Error fails.
  const message = typeof (err as Error)?.message === 'string' ? (err as Error).message : String(err);
  const code = (err as { cause?: { code?: unknown } })?.cause?.code ?? (err as { code?: unknown })?.code;
  return redact(typeof code === 'string' && !message.includes(code) ? `${message}: ${code}` : message, server);
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
