import { Injectable, LoggerService } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { AgentAuditLog, Redactor } from '@zmodu/guard';
import { Skill } from '@zmodu/skills';
import { AgentModule } from './agent.module';
import { AgentRegistry } from './agent.registry';
import { ModelRequest } from './providers/model-provider';
import { ScriptedModelProvider } from './providers/scripted-model.provider';

const API_KEY = 'sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWx';
const CARD = '4111 1111 1111 1111';
const ORDER_ID = '4111111111111112'; // 16 digits, fails the Luhn check: not a card
const BEARER = 'eyJhbGciOi.upstream-session-0123456789';
const SECRETS = [API_KEY, CARD, '4111111111111111', BEARER, 'my-own-key-value'];

@Injectable()
class VaultSkills {
  received: unknown[] = [];

  @Skill({
    name: 'vault.charge',
    action: 'read',
    description: 'Charge a card on file',
    parameters: {
      type: 'object',
      properties: {
        customer: { type: 'string' },
        apiKey: { type: 'string', 'x-sensitive': true },
        card: { type: 'object', properties: { pan: { type: 'string', 'x-sensitive': true }, holder: { type: 'string' } } },
      },
      required: ['customer', 'apiKey'],
    },
  })
  charge(args: Record<string, unknown>) {
    this.received.push(args);
    return { receipt: 'r-1', cardOnFile: CARD, note: `charged with key ${API_KEY}`, orderId: ORDER_ID };
  }

  @Skill({ name: 'vault.fail', action: 'read', description: 'Fails upstream', parameters: { type: 'object' } })
  fail() {
    throw new Error(`upstream refused: Authorization: Bearer ${BEARER}`);
  }
}

class CapturingLogger implements LoggerService {
  readonly lines: string[] = [];
  log(message: unknown) {
    this.lines.push(String(message));
  }
  error(message: unknown, ...rest: unknown[]) {
    this.lines.push([message, ...rest].map(String).join(' '));
  }
  warn(message: unknown) {
    this.lines.push(String(message));
  }
  debug(message: unknown) {
    this.lines.push(String(message));
  }
  verbose(message: unknown) {
    this.lines.push(String(message));
  }
}

describe('redaction on the one path of tool calls', () => {
  let app: TestingModule;
  const seen: ModelRequest[] = [];
  const logger = new CapturingLogger();

  beforeAll(async () => {
    const provider = new ScriptedModelProvider([
      {
        toolCalls: [
          {
            name: 'vault.charge',
            arguments: { customer: 'c-7', apiKey: 'my-own-key-value', card: { pan: '4111111111111111', holder: 'J. Doe' } },
          },
        ],
      },
      (req) => (seen.push(req), { toolCalls: [{ name: 'vault.fail', arguments: {} }] }),
      (req) => (seen.push(req), { text: 'done' }),
    ]);
    app = await Test.createTestingModule({
      imports: [
        AgentModule.forRoot({
          agents: [{ name: 'cashier', provider, skills: ['vault.charge', 'vault.fail'], guard: { allow: ['vault.charge', 'vault.fail'] } }],
          guard: { auditStore: 'memory', quotaStore: 'memory' },
        }),
      ],
      providers: [VaultSkills],
    }).compile();
    app.useLogger(logger);
    await app.init();
  });

  afterAll(async () => {
    await app?.close();
  });

  it('gives the handler the real values, and shows the model, the run result, the audit and the logs only redacted ones', async () => {
    const redactor = app.get(Redactor);
    const before = redactor.metrics();
    const result = await app.get(AgentRegistry).get('cashier').run('charge c-7', { tenantId: 't1', userId: 'u1' });
    expect(result.stoppedReason).toBe('final');

    // The handler needs the real values.
    expect(app.get(VaultSkills).received).toEqual([
      { customer: 'c-7', apiKey: 'my-own-key-value', card: { pan: '4111111111111111', holder: 'J. Doe' } },
    ]);

    // What the model received: the tool result, redacted; the order id that fails the Luhn check is kept.
    const toolMessage = seen[0].messages.find((m) => m.role === 'tool');
    expect(JSON.parse(toolMessage!.content as string)).toEqual({
      receipt: 'r-1',
      cardOnFile: '[redacted]',
      note: 'charged with key [redacted]',
      orderId: ORDER_ID,
    });
    const failure = seen[1].messages.filter((m) => m.role === 'tool').at(-1);
    expect(JSON.parse(failure!.content as string)).toEqual({ error: 'SkillFailed', reason: 'internal_error' });

    // The run result (what POST /agents/:name/runs returns): x-sensitive arguments masked, the observation redacted.
    const [charge] = result.steps[0].toolCalls;
    expect(charge.arguments).toEqual({ customer: 'c-7', apiKey: '[redacted]', card: { pan: '[redacted]', holder: 'J. Doe' } });
    expect(charge.observation).toContain(ORDER_ID);
    const shown = JSON.stringify(result);
    for (const secret of SECRETS) expect(shown).not.toContain(secret);

    // The audit entry records arguments and result, redacted the same way.
    const audit = await app.get(AgentAuditLog).query({ runId: result.runId });
    expect(audit.map((a) => [a.skill, a.outcome])).toEqual([
      ['vault.charge', 'ok'],
      ['vault.fail', 'error'],
    ]);
    expect(audit[0].args).toEqual({ customer: 'c-7', apiKey: '[redacted]', card: { pan: '[redacted]', holder: 'J. Doe' } });
    expect(audit[0].result).toEqual({ receipt: 'r-1', cardOnFile: '[redacted]', note: 'charged with key [redacted]', orderId: ORDER_ID });
    for (const secret of SECRETS) expect(JSON.stringify(audit)).not.toContain(secret);

    // The log line of the failing handler (it logs the error with its stack) has the bearer token masked.
    const failed = logger.lines.filter((l) => l.includes("skill 'vault.fail' failed"));
    expect(failed).toHaveLength(1);
    expect(failed[0]).toContain('Authorization: Bearer [redacted]');
    for (const secret of SECRETS) expect(logger.lines.join('\n')).not.toContain(secret);

    // Counted: 2 x-sensitive fields in the run result's arguments (the audit shares them), a card and a key in the result, the token in the log.
    const after = redactor.metrics();
    expect(after.sensitiveFields - before.sensitiveFields).toBe(2);
    expect(after.cards - before.cards).toBe(1);
    expect(after.secrets - before.secrets).toBe(1);
    expect(after.tokens - before.tokens).toBe(1);
    expect(after.total).toBeGreaterThan(before.total);
  });

  it('fails the boot when AgentModule is given bad redaction options, naming the field', async () => {
    const build = Test.createTestingModule({
      imports: [
        AgentModule.forRoot({
          agents: [],
          guard: { auditStore: 'memory', quotaStore: 'memory', redaction: { patterns: ['(unclosed'] } },
        }),
      ],
    }).compile();
    await expect(build).rejects.toThrow('redaction.patterns[0] is not a valid regular expression');
  });
});
