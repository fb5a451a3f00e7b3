import type { IncomingMessage } from 'node:http';
import type { AddressInfo, Server, Socket } from 'node:net';

/** A name (and port) the Host header may carry: `port` undefined for any port. */
export interface HostRule {
  readonly hostname: string;
  readonly port?: string;
}

/** The Host names of a server that listens on a loopback address, on any port. */
export const LOOPBACK_HOSTS: readonly HostRule[] = Object.freeze([
  { hostname: 'localhost' },
  { hostname: '127.0.0.1' },
  { hostname: '[::1]' },
]);

/** An allowed origin as the Origin header carries it (`https://app.example.com`, default port omitted); throws on anything else. */
export function normalizeOrigin(value: unknown): string {
  if (typeof value !== 'string' || value === '') throw new Error('must be an origin such as https://app.example.com');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`must be an origin such as https://app.example.com (got ${JSON.stringify(value).slice(0, 80)})`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`must be an http: or https: origin (got ${url.protocol})`);
  if (
    url.username ||
    url.password ||
    (url.pathname !== '/' && url.pathname !== '') ||
    url.search ||
    url.hash ||
    /\/./.test(value.replace(/^https?:\/\//i, ''))
  )
    throw new Error(`must be scheme://host[:port] only, no path, query or user (got ${JSON.stringify(value).slice(0, 80)})`);
  return url.origin;
}

/** An allowed host: `api.example.com`, `api.example.com:8443`, `[::1]`; `*` for any. Throws on anything else. */
export function parseHost(value: unknown): HostRule | null {
  if (value === '*') return null;
  if (typeof value !== 'string' || value === '' || /[\s/?#@]/.test(value))
    throw new Error(
      `must be a host name, optionally with a port, such as api.example.com or 127.0.0.1:3000 (got ${JSON.stringify(value)?.slice(0, 80)})`,
    );
  const rule = hostOf(value);
  if (!rule) throw new Error(`must be a host name, optionally with a port (got ${JSON.stringify(value).slice(0, 80)})`);
  return rule;
}

/** The name and port of a Host header value, normalised as a URL would (lower case, IPv6 in brackets); null if not one. */
export function hostOf(value: string): HostRule | null {
  try {
    const url = new URL(`http://${value}`);
    if (url.username || url.password || url.pathname !== '/' || url.search || url.hash) return null;
    const explicit = /:(\d+)$/.exec(value)?.[1];
    return explicit !== undefined ? { hostname: url.hostname, port: String(Number(explicit)) } : { hostname: url.hostname };
  } catch {
    return null;
  }
}

/** Whether the server that took this request listens on a loopback address (else on all, or another interface). */
export function boundToLoopback(req: IncomingMessage): boolean {
  const socket = req.socket as Socket & { server?: Server };
  const address = socket?.server?.address?.();
  const ip =
    address && typeof address === 'object' ? (address as AddressInfo).address : typeof address === 'string' ? null : socket?.localAddress;
  return typeof ip === 'string' && (/^127\./.test(ip) || ip === '::1' || /^::ffff:127\./i.test(ip));
}

export function hostAllowed(rules: readonly HostRule[], host: HostRule): boolean {
  return rules.some((r) => r.hostname === host.hostname && (r.port === undefined || r.port === (host.port ?? '')));
}
