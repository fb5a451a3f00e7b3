import { currentToken } from './session';
import type {
  ActionSchema,
  AgentsReport,
  AuditRecord,
  ConsoleConfig,
  PipelineOutcome,
  Preview,
  Proposal,
  ProposalPage,
  ProposalRun,
  Session,
} from './types';

/** An HTTP error with the server's JSON body (message, field, current). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly body: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** Where the console's own files are: the directory of the page (config.json sits next to index.html). */
function consoleUrl(file: string): string {
  const path = window.location.pathname;
  const dir = path.endsWith('/') ? path : `${path}/`;
  return `${dir}${file}`;
}

async function parse<T>(res: Response): Promise<T> {
  const text = await res.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = { message: text };
  }
  if (!res.ok) {
    const b = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
    const message = Array.isArray(b.message) ? b.message.join('; ') : typeof b.message === 'string' ? b.message : res.statusText;
    throw new ApiError(res.status, message || `HTTP ${res.status}`, b);
  }
  return body as T;
}

export async function loadConfig(): Promise<ConsoleConfig> {
  const res = await fetch(consoleUrl('config.json'), { headers: { Accept: 'application/json' }, cache: 'no-store' });
  return parse<ConsoleConfig>(res);
}

/** The data calls: the token goes in the Authorization header only (never in a URL). */
export class Api {
  constructor(
    private readonly base: string,
    private readonly token: string = currentToken() ?? '',
    /** Called on a 401 (the token expired or was revoked meanwhile): the app signs out. */
    private readonly onUnauthorized: () => void = () => undefined,
  ) {}

  private async call<T>(method: string, path: string, body?: unknown, url = `${this.base}${path}`): Promise<T> {
    const headers: Record<string, string> = { Accept: 'application/json', Authorization: `Bearer ${this.token}` };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(url, {
      method,
      headers,
      cache: 'no-store',
      credentials: 'omit',
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    if (res.status === 401) this.onUnauthorized();
    return parse<T>(res);
  }

  session(): Promise<Session> {
    return this.call<Session>('GET', '', undefined, consoleUrl('session'));
  }
  pending(): Promise<ProposalPage> {
    return this.call<ProposalPage>('GET', '/approvals?status=pending&page=1&limit=100');
  }
  proposal(id: string): Promise<Proposal> {
    return this.call<Proposal>('GET', `/approvals/${encodeURIComponent(id)}`);
  }
  schema(id: string): Promise<ActionSchema> {
    return this.call<ActionSchema>('GET', `/approvals/${encodeURIComponent(id)}/schema`);
  }
  preview(id: string, version: number, payload: unknown): Promise<Preview> {
    return this.call<Preview>('POST', `/approvals/${encodeURIComponent(id)}/preview`, { version, payload });
  }
  run(id: string): Promise<ProposalRun> {
    return this.call<ProposalRun>('GET', `/approvals/${encodeURIComponent(id)}/run`);
  }
  approve(id: string, body: { reason: string; version: number; step: number; payload?: unknown }): Promise<PipelineOutcome> {
    return this.call<PipelineOutcome>('POST', `/approvals/${encodeURIComponent(id)}/approve`, body);
  }
  reject(id: string, body: { reason: string; version: number; step: number }): Promise<PipelineOutcome> {
    return this.call<PipelineOutcome>('POST', `/approvals/${encodeURIComponent(id)}/reject`, body);
  }
  audit(runId: string): Promise<{ entries: AuditRecord[]; nextCursor: string | null }> {
    return this.call('GET', `/audit?run=${encodeURIComponent(runId)}&limit=500`);
  }
  agents(): Promise<AgentsReport> {
    return this.call<AgentsReport>('GET', '/agents');
  }
}
