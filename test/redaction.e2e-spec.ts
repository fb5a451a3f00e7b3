import { ConsoleLogger, Injectable, Logger } from '@nestjs/common';
import { ScriptedModelProvider } from '@zmodu/agent';
import type { ModelProvider, ModelRequest, ModelTurn } from '@zmodu/agent';
import { AgentAuditLog, Redactor } from '@zmodu/guard';
import { Skill } from '@zmodu/skills';
import { JsonLogger } from '../apps/sample/src/logging/json-logs.module';
import request from 'supertest';
import { scriptedTrader } from '../apps/sample/src/agents/trader.agent';
import { mintToken } from '../apps/sample/src/auth/dev-token';
import { sampleAppsOnTestDatabase } from './support/sample-apps';

const SECRET = 'test-secret-that-is-long-enough-for-hs256-0123456789';
const bearer = (tenant: string, user: string) => `Bearer ${mintToken(SECRET, { tenant, user })}`;
const API_KEY = 'sk-proj-Zy9XwVuTsRqPoNmLkJiHgFe';
const CARD = '5555-5555-5555-4444';
const ORDER_ID = '5555555555554445'; // fails the Luhn check: shown as it is

interface ToolCall {
  name: string;
  decision: string;
  cause: string | null;
  arguments: unknown;
  observation: string;
}
interface RunBody {
  answer: string;
  steps: Array<{ toolCalls: ToolCall[] }>;
}

const calls = (r: RunBody) => r.steps.flatMap((s) => s.toolCalls);

/** A test-only skill with an x-sensitive argument, registered in the sample app next to its own skills. */
@Injectable()
class BrokerSkills {
  received: unknown[] = [];
  @Skill({
    name: 'broker.link',
    action: 'read',
    description: 'Link a broker account',
    parameters: {
      type: 'object',
      properties: {
        broker: { type: 'string' },
        credentials: { type: 'object', properties: { apiKey: { type: 'string', 'x-sensitive': true } } },
      },
      required: ['broker'],
    },
  })
  link(args: unknown) {
    this.received.push(args);
    return { linked: true };
  }
}

/** The sample's scripted trader, except for a goal starting "link:", which calls broker.link (not in the trader's allow list). */
class TraderOrLink implements ModelProvider {
  readonly name = 'scripted';
  readonly requests: ModelRequest[] = [];
  private readonly trader = scriptedTrader();
  private readonly link = new ScriptedModelProvider([
    { toolCalls: [{ name: 'broker.link', arguments: { broker: 'ib', credentials: { apiKey: 'plain-secret-value' } } }] },
    { text: 'done' },
  ]);
  complete(req: ModelRequest): Promise<ModelTurn> {
    this.requests.push(req);
    const goal = req.messages[0]?.role === 'user' ? req.messages[0].content : '';
    return goal.startsWith('link:') ? this.link.complete(req) : this.trader.complete(req);
  }
}

describe('sample app: redaction of what a run returns over HTTP', () => {
  const { boot } = sampleAppsOnTestDatabase(SECRET);

  async function run(app: Awaited<ReturnType<typeof boot>>, goal: string): Promise<RunBody> {
    const res = await request(app.getHttpServer()).post('/agents/trader/runs').set('Authorization', bearer('t1', 'alice')).send({ goal });
    expect(res.status).toBe(200);
    return res.body as RunBody;
  }

  it('a card number and an API key in a tool call and its result are masked in the run result, for the model too; an order id that fails Luhn is not', async () => {
    const model = new TraderOrLink();
    const app = await boot({ model: { provider: model } }, [BrokerSkills]);
    const before = app.get(Redactor).metrics();

    const remembered = await run(app, `Remember: my card is ${CARD}, order ${ORDER_ID}, broker key ${API_KEY}`);
    const [remember] = calls(remembered);
    expect(remember).toMatchObject({ name: 'memory.remember', decision: 'allowed' });
    // A note's content is x-sensitive: the run's steps (stored with the run) never keep it; the memory store does.
    expect(remember.arguments).toEqual({ content: '[redacted]', kind: 'preference' });

    model.requests.length = 0;
    const later = await run(app, 'What do you remember about me?');
    const [recall] = calls(later);
    expect(recall).toMatchObject({ name: 'memory.recall', decision: 'allowed' });
    // The tool result as the model received it and as HTTP returns it.
    const toolMessages = model.requests.flatMap((r) => r.messages.filter((m) => m.role === 'tool').map((m) => m.content));
    expect(toolMessages.length).toBeGreaterThan(0);
    for (const text of [...toolMessages, recall.observation]) {
      expect(text).toContain(`my card is [redacted], order ${ORDER_ID}, broker key [redacted]`);
      expect(text).not.toContain(API_KEY);
      expect(text).not.toContain(CARD);
    }
    // Every tool call the run result shows. (Not the model's own text: the memory block of the system prompt holds the
    // note as stored, and the scripted trader quotes it; see docs/skills-and-policies.md, Redaction, for what is not covered yet.)
    for (const body of [remembered, later]) {
      expect(JSON.stringify(calls(body))).not.toContain(API_KEY);
      expect(JSON.stringify(calls(body))).not.toContain(CARD);
    }
    const after = app.get(Redactor).metrics();
    expect(after.cards - before.cards).toBeGreaterThanOrEqual(2);
    expect(after.secrets - before.secrets).toBeGreaterThanOrEqual(2);
  });

  it("an x-sensitive argument is masked in the run result's steps (here of a call the trader's allow list refuses)", async () => {
    const app = await boot({ model: { provider: new TraderOrLink() } }, [BrokerSkills]);
    const body = await run(app, 'link: my broker');
    const [link] = calls(body);
    expect(link).toMatchObject({ name: 'broker.link', decision: 'denied', cause: 'denied_not_listed' });
    expect(link.arguments).toEqual({ broker: 'ib', credentials: { apiKey: '[redacted]' } });
    expect(JSON.stringify(body)).not.toContain('plain-secret-value');
    expect(app.get(BrokerSkills).received).toEqual([]);
  });
});

/** TraderOrLink that logs, as a model client's debug logging would: the goal it got, the tool calls it sends, an error. */
class LoggingModel extends TraderOrLink {
  private readonly logger = new Logger('LoggingModel');
  override async complete(req: ModelRequest): Promise<ModelTurn> {
    const goal = req.messages[0]?.role === 'user' ? req.messages[0].content : '';
    this.logger.log(`model request for the goal: ${goal}`);
    const turn = await super.complete(req);
    this.logger.debug({ msg: 'model turn', toolCalls: turn.toolCalls });
    if (turn.toolCalls.length) this.logger.error(new Error(`upstream hiccup while sending ${JSON.stringify(turn.toolCalls)}`));
    return turn;
  }
}

describe('sample app: structured JSON logs of a run (pino with zmoduPinoOptions)', () => {
  const { boot } = sampleAppsOnTestDatabase(SECRET);
  // app.useLogger replaces the logger of every Nest Logger (a static): the next tests get the console one back.
  afterEach(() => Logger.overrideLogger(new ConsoleLogger()));

  it('every line written during a run carries its run id, tenant and agent; no API key, bearer token, card number or x-sensitive field reaches the logs, the audit or the run result', async () => {
    const written: string[] = [];
    const app = await boot(
      {
        model: { provider: new LoggingModel() },
        logging: { level: 'debug', destination: { write: (line: string) => void written.push(line) } },
      },
      [BrokerSkills],
    );
    app.useLogger(app.get(JsonLogger));
    const authorization = bearer('t1', 'alice');
    const res = await request(app.getHttpServer())
      .post('/agents/trader/runs')
      .set('Authorization', authorization)
      .set('X-Api-Key', API_KEY)
      .send({ goal: `link: broker ib, card ${CARD}, key ${API_KEY}` });
    expect(res.status).toBe(200);
    const body = res.body as RunBody & { runId: string };
    expect(calls(body)).toMatchObject([{ name: 'broker.link', decision: 'denied', cause: 'denied_not_listed' }]);

    const lines = written.map((l) => JSON.parse(l) as Record<string, unknown>);
    // The model's lines: written during the run (a request, the turn it got, an error, for each of its two turns).
    const duringRun = lines.filter((l) => l.context === 'LoggingModel');
    expect(duringRun.length).toBeGreaterThanOrEqual(5);
    for (const line of duringRun) expect(line).toMatchObject({ runId: body.runId, tenantId: 't1', agent: 'trader' });
    expect(duringRun.some((l) => l.level === 50 && typeof (l.err as { stack?: string })?.stack === 'string')).toBe(true);
    // The request's own line (pino-http) is written after the run: its credential headers are censored.
    const completed = lines.find((l) => l.msg === 'request completed') as { req: { headers: Record<string, string> }; runId?: string };
    expect(completed.req.headers).toMatchObject({ authorization: '[redacted]', 'x-api-key': '[redacted]' });
    expect(completed.runId).toBeUndefined();

    const audit = await app.get(AgentAuditLog).query({ runId: body.runId });
    expect(audit.map((a) => [a.skill, a.decision])).toEqual([['broker.link', 'denied']]);
    // (Whatever of the call the audit store keeps, arguments and results included, is checked below.)

    const token = authorization.slice('Bearer '.length);
    const places = { logs: written.join(''), audit: JSON.stringify(audit), result: JSON.stringify(body) };
    for (const [place, text] of Object.entries(places))
      for (const secret of [API_KEY, CARD, token, 'plain-secret-value'])
        expect({ place, leaked: text.includes(secret) ? secret : null }).toEqual({ place, leaked: null });
    // What was masked is still there as the mask, with the rest of the line.
    expect(places.logs).toContain('model request for the goal: link: broker ib, card [redacted], key [redacted]');
  });
});
