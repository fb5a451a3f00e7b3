import { request as httpRequest } from 'node:http';
import { AddressInfo } from 'node:net';
import { INestApplication } from '@nestjs/common';
import { AgentAuditLog } from '@zmodu/guard';
import { mintToken } from '../apps/sample/src/auth/dev-token';
import { modelFromEnv } from '../apps/sample/src/model';
import { anthropicProtocolServer } from './support/anthropic-protocol-server';
import { openAIProtocolServer } from './support/openai-protocol-server';
import type { LocalProtocolServer } from './support/protocol-faults';
import { sampleAppsOnTestDatabase } from './support/sample-apps';

const SECRET = 'test-secret-that-is-long-enough-for-hs256-0123456789';

/** Polls `condition` every 20 ms for at most `ms`; true once it holds. */
async function eventually(condition: () => boolean, ms = 5000): Promise<boolean> {
  for (const until = Date.now() + ms; !condition(); await new Promise((r) => setTimeout(r, 20))) if (Date.now() > until) return false;
  return true;
}

describe.each([
  ['OpenAI', 'openai'],
  ['Anthropic', 'anthropic'],
] as const)('a client that goes away from a plain JSON run (%s-protocol model, official SDK)', (_, kind) => {
  const apps = sampleAppsOnTestDatabase(SECRET);
  let app: INestApplication;
  let model: LocalProtocolServer<unknown>;
  let port: number;

  beforeAll(async () => {
    // The model server holds every request open: it never answers (only the client can end it).
    model =
      kind === 'openai'
        ? await openAIProtocolServer(() => ({ fault: 'silent' }))
        : await anthropicProtocolServer(() => ({ fault: 'silent' }));
    const env =
      kind === 'openai'
        ? { OPENAI_API_KEY: 'local-key-0001', OPENAI_BASE_URL: model.url }
        : { ZMODU_MODEL_PROVIDER: 'anthropic', ANTHROPIC_API_KEY: 'local-key-0001', ANTHROPIC_BASE_URL: model.url };
    app = await apps.boot({ model: modelFromEnv(env) });
    apps.forget();
    await app.listen(0, '127.0.0.1');
    port = (app.getHttpServer().address() as AddressInfo).port;
  });

  afterAll(async () => {
    await app?.close();
    await model?.close();
  });

  it('aborts the model request it left open, as a stream does (attack: a caller starts runs and hangs up, each holding a model request)', async () => {
    const before = { requests: model.requests.length, cut: model.cut() };
    const req = httpRequest({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/agents/trader/runs',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        authorization: `Bearer ${mintToken(SECRET, { tenant: 'acme', user: 'alice' })}`,
        'x-request-id': `${kind}-gone-0001`,
      },
    });
    req.on('error', () => undefined); // the client hangs up itself
    req.end(JSON.stringify({ goal: 'think about it for a long time' }));
    // The run reached the model, which holds the request; then the client goes away.
    expect(await eventually(() => model.requests.length > before.requests)).toBe(true);
    expect(model.cut()).toBe(before.cut);
    req.destroy();
    // The model server sees its request cut off: the run's signal aborted the SDK's request.
    expect(await eventually(() => model.cut() > before.cut)).toBe(true);
    expect(model.requests.length).toBe(before.requests + 1); // not retried either
    expect(await app.get(AgentAuditLog).query({ runId: `${kind}-gone-0001` })).toEqual([]);
  });
});
