import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AgentRegistry, AgentRunResult } from '@zmodu/agent';
import { AgentAuditLog, AuditRecord } from '@zmodu/guard';
import { AppModule } from './app.module';
import { ALL_PERMISSIONS } from './auth/auth.constants';
import { databaseDescription, optionsFromEnv } from './config';

const TENANT = 'acme';
const USER = 'demo-trader';
const GOAL = 'Buy 10 ACME at the current price.';

/** The offline demo: the scripted trader quotes, is refused order.submit, and drafts instead. Exit 0 when the scenario ends so. */
export async function runDemo(): Promise<number> {
  const out = (line = '') => process.stdout.write(`${line}\n`);
  out('zmodu for NestJS: offline demo (scripted model, no model key needed)');
  out(`database: ${databaseDescription()}`);
  out();
  const app: INestApplicationContext = await NestFactory.createApplicationContext(AppModule.register(optionsFromEnv()), {
    logger: ['error', 'warn'],
  });
  try {
    const agent = app.get(AgentRegistry).get('trader');
    const health = agent.auditPolicy();
    out(`agent: trader   allow: ${agent.spec.guard.allow.join(', ')}   allowExecute: ${agent.spec.guard.allowExecute}`);
    out(`auditPolicy: inert=${health.inert} classDeniedTools=[${health.classDeniedTools.join(', ')}] hasClassBlindSpot=${health.hasClassBlindSpot}`);
    out(`caller: tenant ${TENANT}, user ${USER}`);
    out(`goal: ${GOAL}`);
    out();
    const result = await agent.run(GOAL, { tenantId: TENANT, userId: USER, permissions: ALL_PERMISSIONS });
    printRun(result, out);
    const audit = await app.get(AgentAuditLog).query({ runId: result.runId });
    printAudit(audit, out);
    const ok = scenarioHeld(result);
    out();
    out(ok ? 'scenario complete: order.submit was refused by class and the trader fell back to order.draft.' : 'scenario did NOT go as expected.');
    return ok ? 0 : 1;
  } finally {
    await app.close();
  }
}

export function scenarioHeld(result: AgentRunResult): boolean {
  const calls = result.steps.flatMap((s) => s.toolCalls);
  const denied = calls.findIndex((c) => c.name === 'order.submit' && c.cause === 'denied_execute_class');
  const drafted = calls.findIndex((c, i) => i > denied && c.name === 'order.draft' && c.ok);
  const quoted = calls.some((c) => c.name === 'market.quote' && c.ok);
  return result.stoppedReason === 'final' && quoted && denied >= 0 && drafted > denied;
}

function printRun(result: AgentRunResult, out: (l?: string) => void): void {
  for (const step of result.steps) {
    out(`step ${step.index + 1}  model: ${step.text || '(no text)'}`);
    for (const call of step.toolCalls) {
      const verdict = call.decision === 'denied' ? `DENIED (${call.cause})` : call.ok ? 'allowed' : `refused (${call.cause ?? call.outcome})`;
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
    out(`  ${r.skill.padEnd(14)} ${r.action.padEnd(8)} ${r.decision.padEnd(8)} ${(r.cause ?? '-').padEnd(22)} ${r.outcome.padEnd(8)} tenant=${r.tenantId} user=${r.userId}`);
}
