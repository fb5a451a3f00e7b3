import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AgentRegistry, AgentRunResult } from '@zmodu/agent';
import { AgentAuditLog, AuditRecord } from '@zmodu/guard';
import { AppModule } from './app.module';
import { ALL_PERMISSIONS, PERMISSIONS } from './auth/auth.constants';
import { mintToken } from './auth/dev-token';
import { databaseDescription, optionsFromEnv } from './config';

const TENANT = 'acme';
const USER = 'demo-trader';
const GOAL = 'Buy 10 ACME at the current price.';

/**
 * The offline demo: the scripted trader quotes and proposes an order, which waits for a human (the
 * trader may not execute); then the desk's orders go through the pipeline over HTTP. Exit 0 when both parts end so.
 */
export async function runDemo(): Promise<number> {
  const out = (line = '') => process.stdout.write(`${line}\n`);
  out('zmodu for NestJS: offline demo (scripted model, no model key needed)');
  out(`database: ${databaseDescription()}`);
  out();
  // The demo is local and offline: it runs in development mode (the public secret, unless ZMODU_JWT_SECRET is set).
  const options = optionsFromEnv({ ...process.env, ZMODU_DEV: '1' });
  const app: INestApplication = await NestFactory.create(AppModule.register(options), { logger: ['error', 'warn'] });
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
    const result = await agent.run(GOAL, { tenantId: TENANT, userId: USER, permissions: ALL_PERMISSIONS });
    printRun(result, out);
    const audit = await app.get(AgentAuditLog).query({ runId: result.runId });
    printAudit(audit, out);
    const ok = scenarioHeld(result);
    out();
    out(
      ok
        ? 'part 1 complete: the order was priced by the desk and waits for a human (the trader may propose, not execute).'
        : 'part 1 did NOT go as expected.',
    );
    out();
    const staged = await stagedExecution(app, options.jwtSecret, out);
    out();
    out(
      staged
        ? 'part 2 complete: executed, risk_rejected, needs_human, then approved over HTTP and executed.'
        : 'part 2 did NOT go as expected.',
    );
    return ok && staged ? 0 : 1;
  } finally {
    await app.close();
  }
}

/**
 * Part 2, over HTTP: the desk agent (allowed to execute) submits three orders through the
 * pipeline; a desk lead then approves the one that waits for a human, and it executes.
 */
async function stagedExecution(app: INestApplication, secret: string, out: (l?: string) => void): Promise<boolean> {
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
  out(`POST /agents/desk/runs as ${USER}: the desk agent may execute, and every order goes through risk review`);
  const run = await call('POST', '/agents/desk/runs', trader, { goal: 'Place the desk orders.' });
  const steps = (run.body.steps ?? []) as AgentRunResult['steps'];
  const outcomes = steps
    .flatMap((s) => s.toolCalls)
    .map((c) => ({ args: c.arguments, value: JSON.parse(c.observation) as Record<string, unknown> }));
  for (const o of outcomes)
    out(
      `  approval.submit ${JSON.stringify(o.args)}\n    -> ${o.value.verdict} (amount ${o.value.amount}${o.value.reason ? `; ${o.value.reason}` : ''})  proposal ${o.value.proposalId}`,
    );
  out(`answer: ${run.body.answer}`);
  const pending = outcomes.find((o) => o.value.verdict === 'needs_human')?.value.proposalId as string | undefined;
  if (!pending) return false;
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
  return (
    run.status === 200 &&
    JSON.stringify(verdicts) === JSON.stringify(['executed', 'risk_rejected', 'needs_human']) &&
    approved.status === 200 &&
    approved.body.verdict === 'executed'
  );
}

export function scenarioHeld(result: AgentRunResult): boolean {
  const calls = result.steps.flatMap((s) => s.toolCalls);
  const quoted = calls.some((c) => c.name === 'market.quote' && c.ok);
  const proposed = calls.find((c) => c.name === 'approval.submit' && c.ok);
  const verdict = proposed ? (JSON.parse(proposed.observation) as { verdict?: string }).verdict : undefined;
  return result.stoppedReason === 'final' && quoted && verdict === 'execute_not_permitted' && result.pendingApprovals.length === 1;
}

function printRun(result: AgentRunResult, out: (l?: string) => void): void {
  for (const step of result.steps) {
    out(`step ${step.index + 1}  model: ${step.text || '(no text)'}`);
    for (const call of step.toolCalls) {
      const verdict =
        call.decision === 'denied' ? `DENIED (${call.cause})` : call.ok ? 'allowed' : `refused (${call.cause ?? call.outcome})`;
      out(`        -> ${call.name} ${JSON.stringify(call.arguments)}`);
      out(`           ${verdict}: ${call.observation}`);
    }
  }
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
      `  ${r.skill.padEnd(14)} ${r.action.padEnd(8)} ${r.decision.padEnd(8)} ${(r.cause ?? '-').padEnd(22)} ${r.outcome.padEnd(8)} tenant=${r.tenantId} user=${r.userId}`,
    );
}
