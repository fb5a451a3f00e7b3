import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AgentRegistry, AgentRunEvent, AgentRunResult, ToolCallRecord } from '@zmodu/agent';
import { AgentAuditLog, AuditRecord } from '@zmodu/guard';
import { juniorAgent } from './agents';
import { AppModule } from './app.module';
import { ALL_PERMISSIONS, PERMISSIONS } from './auth/auth.constants';
import { mintToken } from './auth/dev-token';
import { databaseDescription, optionsFromEnv } from './config';
import { serveHttp } from './http';

const TENANT = 'acme';
const USER = 'demo-trader';
const GOAL = 'Buy 10 ACME at the current price.';
/** The scripted desk proposes these three whatever the goal says; a real model reads them from it. */
const DESK_GOAL = 'Place these desk orders: buy 10 ACME at 101.25, buy 5000 ACME at 101.25, and buy 500 GLOBEX at 48.10.';

/** What the guard answers a model for an execute-class call its policy may not make: the observation part 3 shows. */
const DENIED_EXECUTE_OBSERVATION = '{"error":"ToolDenied","reason":"denied_execute_class"}';

/**
 * The demo. On the scripted model (no model variables): the trader quotes and proposes an order, which waits for a
 * human (the trader may not execute); then the desk's orders go through the pipeline over HTTP; then a junior trader
 * whose policy may not execute tries to cancel the executed order with command.execute, is refused by class (the
 * ToolDenied observation), and falls back to proposing: it asks the desk with notification.send. It exits 0 when the
 * three parts end so. On a real model (see modelFromEnv) the same parts run, streamed as they happen, and the demo
 * prints what the model did rather than check it against the script: it exits 0 when the model could be used.
 */
export async function runDemo(): Promise<number> {
  const out = (line = '') => process.stdout.write(`${line}\n`);
  // The demo is local: it runs in development mode (the public secret, unless ZMODU_JWT_SECRET is set).
  const options = optionsFromEnv({ ...process.env, ZMODU_DEV: '1' });
  const scripted = options.model.kind === 'scripted';
  out(
    scripted
      ? 'zmodu for NestJS: offline demo (scripted model, no model key needed)'
      : `zmodu for NestJS: demo on a real model; ${options.model.description}`,
  );
  out(`database: ${databaseDescription()}`);
  out();
  // The junior's policy lists an execute skill it may not run: AgentRegistry warns of that blind spot at boot.
  const junior = juniorAgent(options.model.provider);
  const app: INestApplication = await NestFactory.create(AppModule.register({ ...options, extraAgents: [junior] }), {
    logger: ['error', 'warn'],
  });
  serveHttp(app, { docs: false }); // the server's headers; the demo needs no /docs
  await app.listen(0, '127.0.0.1');
  try {
    const agent = app.get(AgentRegistry).get('trader');
    const health = agent.auditPolicy();
    out(`agent: trader   allow: ${agent.spec.guard.allow.join(', ')}   allowExecute: ${agent.spec.guard.allowExecute}`);
    out(
      `auditPolicy: inert=${health.inert} classDeniedTools=[${health.classDeniedTools.join(', ')}] hasClassBlindSpot=${health.hasClassBlindSpot}`,
    );
    out(`caller: tenant ${TENANT}, user ${USER}`);
    out(`goal: ${GOAL}`);
    out();
    const live = new LiveRun(out);
    const result = await agent.run(GOAL, { tenantId: TENANT, userId: USER, permissions: ALL_PERMISSIONS, onEvent: (e) => live.event(e) });
    live.close();
    printResult(result, out);
    const audit = await app.get(AgentAuditLog).query({ runId: result.runId });
    printAudit(audit, out);
    out();
    if (!scripted) {
      out(`part 1 on the real model: ${whatHappened(result)}`);
      if (!modelWasUsable(result)) {
        out(`the model could not be used (${result.stoppedReason}: ${result.error ?? 'no detail'}); check the model variables.`);
        return 1;
      }
    } else
      out(
        scenarioHeld(result)
          ? 'part 1 complete: the order was priced by the desk and waits for a human (the trader may propose, not execute).'
          : 'part 1 did NOT go as expected.',
      );
    out();
    const staged = await stagedExecution(app, options.jwtSecret, scripted, out);
    out();
    if (scripted)
      out(
        staged.held
          ? 'part 2 complete: executed, risk_rejected, needs_human, then approved over HTTP and executed.'
          : 'part 2 did NOT go as expected.',
      );
    else out(`part 2 on the real model: ${staged.summary}`);
    out();
    const fallback = await refusedThenProposed(app, staged.orderId, out);
    out();
    if (scripted)
      out(
        fallbackHeld(fallback)
          ? `part 3 complete: command.execute was refused by class (${DENIED_EXECUTE_OBSERVATION}) and the junior proposed instead (notification.send).`
          : 'part 3 did NOT go as expected.',
      );
    else out(`part 3 on the real model: ${whatHappened(fallback)}`);
    return scripted
      ? scenarioHeld(result) && staged.held && fallbackHeld(fallback)
        ? 0
        : 1
      : staged.usable && modelWasUsable(fallback)
        ? 0
        : 1;
  } finally {
    await app.close();
  }
}

/**
 * Part 2, over HTTP: the desk agent (allowed to execute) submits three orders through the pipeline, streamed as
 * Server-Sent Events; a desk lead then approves the one that waits for a human, and it executes.
 */
async function stagedExecution(
  app: INestApplication,
  secret: string,
  scripted: boolean,
  out: (l?: string) => void,
): Promise<{ held: boolean; usable: boolean; summary: string; orderId?: string }> {
  const base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  const call = async (method: string, path: string, token: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const trader = mintToken(secret, { tenant: TENANT, user: USER });
  const lead = mintToken(secret, { tenant: TENANT, user: 'demo-lead', permissions: [PERMISSIONS.deskLead, PERMISSIONS.approvalDecide] });
  out(`part 2: staged execution over HTTP at ${base}`);
  out(
    `POST /agents/desk/runs as ${USER} (Accept: text/event-stream): the desk agent may execute, and every order goes through risk review`,
  );
  const run = await streamedRun(`${base}/agents/desk/runs`, trader, DESK_GOAL, out);
  const calls = run.result?.steps.flatMap((s) => s.toolCalls) ?? [];
  const outcomes = calls.map((c) => ({ name: c.name, value: parseObservation(c.observation) }));
  out(`answer: ${run.result?.answer ?? `(no result: ${run.error ?? `HTTP ${run.status}`})`}`);
  const usable = run.status === 200 && run.result !== undefined && modelWasUsable(run.result);
  const pending = outcomes.find((o) => o.value.verdict === 'needs_human')?.value.proposalId as string | undefined;
  if (!pending) {
    const summary = run.result
      ? `${whatHappened(run.result)}; no proposal waits for a human, so there is nothing to approve.`
      : 'the run failed.';
    return { held: false, usable, summary };
  }
  out();
  out('GET /admin/approvals?status=pending as demo-lead');
  const queue = await call('GET', '/admin/approvals?status=pending', lead);
  out(
    `  ${(queue.body.items as Array<{ id: string; action: string; amount: number }>).map((p) => `${p.id} ${p.action} ${p.amount}`).join('\n  ')}`,
  );
  const read = await call('GET', `/admin/approvals/${pending}`, lead);
  const version = read.body.version as number;
  const step = (read.body.waitingStep as { index: number; name: string }).index;
  out(`GET /admin/approvals/${pending}: version ${version}, waiting step ${step} (${(read.body.waitingStep as { name: string }).name})`);
  out(`POST /admin/approvals/${pending}/approve as demo-lead, naming version ${version} and step ${step}`);
  const approved = await call('POST', `/admin/approvals/${pending}/approve`, lead, { reason: 'within the desk mandate', version, step });
  out(`  ${approved.status} ${JSON.stringify(approved.body)}`);
  const verdicts = outcomes.map((o) => o.value.verdict);
  const held =
    scripted &&
    JSON.stringify(verdicts) === JSON.stringify(['executed', 'risk_rejected', 'needs_human']) &&
    approved.status === 200 &&
    approved.body.verdict === 'executed';
  const summary = `${whatHappened(run.result!)}; the proposal that waited for a human was approved over HTTP: ${approved.status} ${String(approved.body.verdict ?? approved.body.message)}.`;
  const executed = outcomes.find((o) => o.value.verdict === 'executed')?.value.result as { orderId?: string } | undefined;
  return { held, usable: usable && approved.status === 200, summary, orderId: executed?.orderId };
}

/**
 * Part 3, the guard's refusal by class: the junior trader's policy lists command.execute but may not execute. Its
 * model tries to cancel an order with it, gets the ToolDenied observation (no handler runs, nothing is cancelled),
 * and falls back to a propose skill: notification.send asks the desk on desk-log.
 */
async function refusedThenProposed(app: INestApplication, orderId: string | undefined, out: (l?: string) => void): Promise<AgentRunResult> {
  const agent = app.get(AgentRegistry).get('junior');
  const health = agent.auditPolicy();
  const goal = orderId ? `Cancel order ${orderId}.` : 'Cancel the last order of the desk.';
  out('part 3: an execute-class call refused by the guard, and the fallback to a propose skill');
  out(`agent: junior   allow: ${agent.spec.guard.allow.join(', ')}   allowExecute: ${agent.spec.guard.allowExecute}`);
  out(
    `auditPolicy: classDeniedTools=[${health.classDeniedTools.join(', ')}] hasClassBlindSpot=${health.hasClassBlindSpot} (the boot warning above: listed, refused by class)`,
  );
  out(`caller: tenant ${TENANT}, user ${USER}`);
  out(`goal: ${goal}`);
  out();
  const live = new LiveRun(out);
  const result = await agent.run(goal, { tenantId: TENANT, userId: USER, permissions: ALL_PERMISSIONS, onEvent: (e) => live.event(e) });
  live.close();
  printResult(result, out);
  printAudit(await app.get(AgentAuditLog).query({ runId: result.runId }), out);
  return result;
}

/** POSTs a goal with `Accept: text/event-stream` and prints the run's events as they arrive; returns its final result. */
async function streamedRun(
  url: string,
  token: string,
  goal: string,
  out: (l?: string) => void,
): Promise<{ status: number; result?: AgentRunResult; error?: string }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ goal }),
  });
  if (!res.ok || !res.body || !res.headers.get('content-type')?.startsWith('text/event-stream'))
    return { status: res.status, error: JSON.stringify(await res.json().catch(() => null)) };
  const live = new LiveRun(out);
  let result: AgentRunResult | undefined;
  let error: string | undefined;
  for await (const { event, data } of readEventStream(res.body)) {
    const value = JSON.parse(data) as Record<string, unknown>;
    if (event === 'delta') live.event({ type: 'delta', step: value.step as number, text: value.text as string });
    else if (event === 'step') live.event({ type: 'step', step: value.step as number, toolCall: value.toolCall as ToolCallRecord });
    else if (event === 'final') result = value as unknown as AgentRunResult;
    else if (event === 'error') error = String(value.message);
  }
  live.close();
  return { status: res.status, result, error };
}

/** The events of a Server-Sent Events body: `event:` and `data:` lines, an event ending at a blank line. */
async function* readEventStream(body: ReadableStream<Uint8Array>): AsyncGenerator<{ event: string; data: string }> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, '\n');
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (data.length) yield { event, data: data.join('\n') };
    }
  }
}

/** Prints a run as it happens: the model's text as it streams, each tool call once the guard decided it. */
class LiveRun {
  private step = -1;
  private open = false;

  constructor(private readonly out: (l?: string) => void) {}

  event(e: AgentRunEvent): void {
    if (e.type === 'final') return;
    if (e.step !== this.step) {
      this.close();
      this.step = e.step;
      process.stdout.write(`step ${e.step + 1}  model: ${e.type === 'step' ? '(no text)\n' : ''}`);
      this.open = e.type === 'delta';
    }
    if (e.type === 'delta') return void process.stdout.write(e.text);
    this.close();
    const call = e.toolCall;
    const verdict = call.decision === 'denied' ? `DENIED (${call.cause})` : call.ok ? 'allowed' : `refused (${call.cause ?? call.outcome})`;
    this.out(`        -> ${call.name} ${JSON.stringify(call.arguments)}`);
    this.out(`           ${verdict}: ${call.observation}`);
  }

  close(): void {
    if (this.open) process.stdout.write('\n');
    this.open = false;
  }
}

/** A run the model took part in, whatever it decided: not a model error, an abort or an outage. */
function modelWasUsable(result: AgentRunResult): boolean {
  return !['model_error', 'aborted', 'timed_out', 'quota_unavailable'].includes(result.stoppedReason);
}

/** One line on what a run did, claiming nothing that a script would have decided. */
function whatHappened(result: AgentRunResult): string {
  const calls = result.steps.flatMap((s) => s.toolCalls);
  const denied = calls.filter((c) => c.decision === 'denied').length;
  const refused = calls.filter((c) => c.decision === 'allowed' && !c.ok).length;
  const names = [...new Set(calls.map((c) => c.name))].join(', ') || 'none';
  return (
    `the run ended ${result.stoppedReason}${result.error ? ` (${result.error})` : ''} after ${result.steps.length} model turns; ` +
    `${calls.length} tool calls (${names}): ${calls.length - denied - refused} ran, ${denied} denied by the guard, ${refused} refused; ` +
    `${result.pendingApprovals.length} proposals wait for a human`
  );
}

function parseObservation(observation: string): Record<string, unknown> {
  try {
    const value = JSON.parse(observation) as unknown;
    return value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

export function scenarioHeld(result: AgentRunResult): boolean {
  const calls = result.steps.flatMap((s) => s.toolCalls);
  const quoted = calls.some((c) => c.name === 'market.quote' && c.ok);
  const proposed = calls.find((c) => c.name === 'approval.submit' && c.ok);
  const verdict = proposed ? (JSON.parse(proposed.observation) as { verdict?: string }).verdict : undefined;
  return result.stoppedReason === 'final' && quoted && verdict === 'execute_not_permitted' && result.pendingApprovals.length === 1;
}

/** Part 3 as scripted: command.execute refused by class with the ToolDenied observation, then notification.send ran. */
export function fallbackHeld(result: AgentRunResult): boolean {
  const calls = result.steps.flatMap((s) => s.toolCalls);
  const refused = calls.findIndex(
    (c) => c.name === 'command.execute' && c.cause === 'denied_execute_class' && c.observation === DENIED_EXECUTE_OBSERVATION,
  );
  const proposed = calls.findIndex((c, i) => i > refused && c.name === 'notification.send' && c.ok);
  return result.stoppedReason === 'final' && refused >= 0 && proposed > refused && result.metrics.toolDenied.denied_execute_class === 1;
}

function printResult(result: AgentRunResult, out: (l?: string) => void): void {
  out();
  out(`answer: ${result.answer}`);
  const m = result.metrics;
  out(
    `metrics: steps ${m.steps}, tool calls ${m.toolCalls}, denied ${JSON.stringify(m.toolDenied)}, tokens in ${m.tokensIn} / out ${m.tokensOut}, ${m.durationMs.toFixed(1)} ms`,
  );
}

function printAudit(rows: AuditRecord[], out: (l?: string) => void): void {
  out();
  out(`audit trail (run ${rows[0]?.runId ?? '-'}):`);
  for (const r of rows)
    out(
      `  ${r.skill.padEnd(17)} ${r.action.padEnd(8)} ${r.decision.padEnd(8)} ${(r.cause ?? '-').padEnd(22)} ${r.outcome.padEnd(8)} tenant=${r.tenantId} user=${r.userId}`,
    );
}
