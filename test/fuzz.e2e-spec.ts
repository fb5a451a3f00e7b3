import { INestApplication } from '@nestjs/common';
import type { ModelProvider, ModelRequest, ModelTurn } from '@zmodu/agent';
import { AgentAuditLog, Guard } from '@zmodu/guard';
import { createSkillContext, SkillDispatcher, SkillRegistry } from '@zmodu/skills';
import fc from 'fast-check';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { ALL_PERMISSIONS } from '../apps/sample/src/auth/auth.constants';
import { mintToken } from '../apps/sample/src/auth/dev-token';
import { runsAsFormula, spreadsheetCells } from '../libs/skills/src/__fixtures__/spreadsheet';
import { sampleAppsOnTestDatabase } from './support/sample-apps';

/**
 * Bad input at the boundaries, fuzzed with fast-check (seeded: the same cases in every run; ZMODU_FUZZ_SEED and
 * ZMODU_FUZZ_RUNS change them): random JSON, huge strings, deep nesting, unicode, prototype keys and numbers at the edges,
 * format and invisible characters in token claims, formula leads in what the CSV export writes,
 * against the sample's HTTP API and the dispatcher. Never a 500 or a stack in an answer, never a hang, never a throw from
 * dispatch, and a refused decision writes nothing.
 */
const SEED = Number(process.env.ZMODU_FUZZ_SEED ?? 20261201);
const RUNS = Number(process.env.ZMODU_FUZZ_RUNS ?? 40);
const SECRET = 'fuzz-secret-that-is-long-enough-for-hs256-0123456789';

/** A stack trace, or a file of ours, in an answer: what must never leak. */
const STACK = /\bat [\w$.<>]+ \(|\bnode_modules\b|\.ts:\d+:\d+|\.js:\d+:\d+/;

const PROTO_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', '__defineGetter__'];
const edgeNumber = fc.constantFrom(0, -0, 1, -1, 1e308, -1e308, 5e-324, 2 ** 31, -(2 ** 31) - 1, 2 ** 53, 2 ** 53 + 2, 0.1 + 0.2, 1e21);
const nastyString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    ...PROTO_KEYS,
    '',
    ' ',
    '\u0000',
    '\ud800',
    '\udfff\ud800',
    '\u202e\u2066',
    '💥🧨',
    '%00',
    '../../etc/passwd',
    "'; DROP TABLE zmodu_proposals; --",
    '${jndi:ldap://x}',
    '<script>alert(1)</script>',
  ),
  fc.integer({ min: 1_000, max: 200_000 }).map((n) => 'x'.repeat(n)),
);
const key = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom(...PROTO_KEYS));
const { json } = fc.letrec<{ json: unknown }>((tie) => ({
  json: fc.oneof(
    { depthSize: 'small', maxDepth: 4 },
    fc.constant(null),
    fc.boolean(),
    edgeNumber,
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    nastyString,
    fc.array(tie('json'), { maxLength: 4 }),
    fc.dictionary(key, tie('json'), { maxKeys: 5 }),
  ),
}));
/** JSON nested `depth` deep, as text (a parser that recurses falls over it). */
const deepText = fc
  .tuple(fc.integer({ min: 50, max: 20_000 }), fc.boolean())
  .map(([depth, asArray]) => (asArray ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth)));
/** A request body: a JSON value, an object with random members, deep JSON text, or text that is not JSON. */
const body = fc.oneof(
  json.map((v) => ({ text: JSON.stringify(v) ?? 'null', type: 'application/json' })),
  fc.dictionary(key, json, { maxKeys: 6 }).map((v) => ({ text: JSON.stringify(v), type: 'application/json' })),
  deepText.map((text) => ({ text, type: 'application/json' })),
  nastyString.map((text) => ({ text, type: 'application/json' })),
  nastyString.map((text) => ({ text, type: 'text/plain' })),
);
/** A path segment or a query value: random text, prototype names, ids of the wrong shape, huge ones. */
const segment = fc.oneof(nastyString, fc.uuid(), edgeNumber.map(String));
const uuid = '7f1c2b4e-1a2b-4c3d-8e9f-0a1b2c3d4e5f';

/** Characters a name must never carry into an audit entry, a log line or an answer as they are. */
const CONTROL = /[\p{Cc}\p{Cf}\p{Cs}\u2028\u2029]/u;
/** Control, format and separator characters, lone surrogates, an ANSI escape and a forged log line. */
const hostileChar = fc.constantFrom(
  '\u0000',
  '\n',
  '\r',
  '\u001b[31m',
  '\u0085',
  '\u009b',
  '\u200b',
  '\u202e',
  '\u2066',
  '\u2028',
  '\ud800',
  '\ufeff',
  '\n[INFO] forged\n',
);
/**
 * A tool name (or call id) a compromised model makes up: a skill's name with something glued on, control characters
 * anywhere, or very long (up to 200,000 characters).
 */
const hostileToolName = fc.oneof(
  fc
    .tuple(fc.constantFrom('market.quote', 'order.draft', 'memory.recall', ''), hostileChar, fc.string({ maxLength: 20 }))
    .map((p) => p.join('')),
  fc.array(fc.oneof(hostileChar, fc.string({ maxLength: 8 })), { minLength: 1, maxLength: 30 }).map((p) => p.join('')),
  fc.tuple(fc.integer({ min: 65, max: 200_000 }), hostileChar).map(([n, c]) => `${'n'.repeat(n)}${c}`),
  fc.constantFrom(...PROTO_KEYS),
);
/** One model turn of 1 to 4 such calls. */
const hostileTurn = fc.array(fc.record({ name: hostileToolName, id: fc.oneof(hostileToolName, fc.constant('call_1')), arguments: json }), {
  minLength: 1,
  maxLength: 4,
});

/** A model whose first turn is the calls the fuzz case set, then answers. */
class HostileModel implements ModelProvider {
  readonly name = 'hostile';
  turn: ReadonlyArray<{ name: string; id: string; arguments: unknown }> = [];
  async complete(request: ModelRequest): Promise<ModelTurn> {
    const played = request.messages.filter((m) => m.role === 'assistant').length;
    const usage = { inputTokens: 10, outputTokens: 10 };
    return played === 0 ? { text: '', toolCalls: this.turn, usage } : { text: 'done', toolCalls: [], usage };
  }
}

/** Percent-encode text for a URL; a lone surrogate (which encodeURIComponent refuses) goes as the bytes of one (not UTF-8). */
const enc = (text: string): string =>
  text.replace(/[\ud800-\udbff][\udc00-\udfff]|[\ud800-\udfff]|[^]/g, (c) =>
    c.length === 1 && c >= '\ud800' && c <= '\udfff' ? '%ED%A0%80' : encodeURIComponent(c),
  );

/** Every code point of Unicode category Cf (format: zero-width spaces and joiners, bidi controls, the BOM, tags, ...). */
const FORMAT_CHARS = Array.from({ length: 0x110000 }, (_, cp) => cp)
  .filter((cp) => (cp < 0xd800 || cp > 0xdfff) && /\p{Cf}/u.test(String.fromCodePoint(cp)))
  .map((cp) => String.fromCodePoint(cp));
/** Other characters that show as nothing or as something else, and unnormalised or blank-edged forms. */
const LOOK_ALIKE_CHARS = ['\u034f', '\ufe0f', '\u3164', '\u115f', '\u2028', '\u2029', '\ue000', '\u0378', '\u0301', '\u0085', '\ud800'];
/** An id that looks like `base` on screen and is another one: a format or invisible character put in it, or an unnormalised form. */
const lookAlikeId = fc.oneof(
  fc
    .tuple(fc.constantFrom('acme', 'lee', 'globex'), fc.constantFrom(...FORMAT_CHARS, ...LOOK_ALIKE_CHARS), fc.nat())
    .map(([base, char, at]) => base.slice(0, at % (base.length + 1)) + char + base.slice(at % (base.length + 1))),
  fc.constantFrom('e\u0301quipe', '\u212b', 'lee\u00a0', '\u00a0lee', 'lee ', 'Ame\u0301lie'),
);

/** A value a spreadsheet would run as a formula: blanks or invisible characters, a formula lead, then anything. */
const formulaLead = fc
  .tuple(
    fc.array(fc.constantFrom(' ', '\t', '\r', '\n', '\u00a0', '\u3000', '\u200b', '\ufeff'), { maxLength: 3 }),
    fc.constantFrom('=', '+', '-', '@', '\uff1d', '\uff0b', '\uff0d', '\uff20'),
    fc.string({ maxLength: 30 }),
    fc.constantFrom('', ";=cmd|' /C calc'!A0", ',=1+1', '\t@SUM(A1)', '\r\n=HYPERLINK("http://x")'),
  )
  .map(([blanks, lead, rest, tail]) => `${blanks.join('')}${lead}${rest}${tail}`);

describe('bad input at every boundary (fast-check, seeded)', () => {
  // Its afterAll drops the database: after the inner block's afterAll closed the app (on PostgreSQL, an app closed after
  // the drop meets a database that does not exist).
  const apps = sampleAppsOnTestDatabase(SECRET);
  describe('against the sample app', () => {
    let app: INestApplication;
    const token = mintToken(SECRET, { tenant: 'acme', user: 'fuzz', permissions: ALL_PERMISSIONS });

    beforeAll(async () => {
      app = await apps.boot();
      apps.forget(); // one app for the file, closed in afterAll
    });

    afterAll(async () => {
      await app?.close();
    });

    /** An answer to bad input: a 4xx (or a 2xx for input that happens to be good), JSON, without a stack, in time. */
    const expectClean = (res: request.Response, what: string) => {
      expect([what, res.status < 500]).toEqual([what, true]);
      expect([what, STACK.test(res.text ?? '')]).toEqual([what, false]);
    };
    const send = (method: 'get' | 'post' | 'put' | 'delete', path: string, b?: { text: string; type: string }) => {
      const r = request(app.getHttpServer())
        [method](path)
        .set('Authorization', `Bearer ${token}`)
        .timeout({ response: 20_000, deadline: 30_000 });
      return b ? r.set('Content-Type', b.type).send(b.text) : r;
    };

    it('the HTTP API answers random bodies, paths and queries with a 4xx or a 2xx, never a 500, a stack or a hang', async () => {
      const statuses = new Map<number, number>();
      const routes: Array<
        (seg: string, b: { text: string; type: string }) => [string, 'get' | 'post' | 'put' | 'delete', string, boolean]
      > = [
        (s, b) => ['agent run', 'post', `/agents/${enc(s)}/runs`, !!b],
        (_s, _b) => ['trader run', 'post', '/agents/trader/runs', true],
        (_s, _b) => ['worker goal', 'post', '/agents/desk/goals', true],
        (s) => ['run read', 'get', `/agents/runs/${enc(s)}`, false],
        (s) => ['approve', 'post', `/admin/approvals/${enc(s)}/approve`, true],
        (_s) => ['approve uuid', 'post', `/admin/approvals/${uuid}/approve`, true],
        (_s) => ['preview uuid', 'post', `/admin/approvals/${uuid}/preview`, true],
        (s) => ['approvals list', 'get', `/admin/approvals?status=${enc(s)}&page=${enc(s)}`, false],
        (s) => ['config put', 'put', `/admin/config/${enc(s)}`, true],
        (_s) => ['config put known', 'put', '/admin/config/orders.maxQty', true],
        (s) => ['audit', 'get', `/admin/audit?kind=${enc(s)}&cursor=${enc(s)}&since=${enc(s)}`, false],
        (s) => ['quota', 'get', `/admin/quota?period=${enc(s)}&limit=${enc(s)}`, false],
        (s) => ['memory', 'get', `/memory?limit=${enc(s)}`, false],
        (s) => ['jobs', 'get', `/jobs?status=${enc(s)}`, false],
      ];
      await fc.assert(
        fc.asyncProperty(fc.nat({ max: routes.length - 1 }), segment, body, async (i, seg, b) => {
          const [what, method, path, withBody] = routes[i](seg, b);
          const res = await send(method, path.slice(0, 9_000), withBody ? b : undefined);
          expectClean(res, `${what} ${method.toUpperCase()} ${path.slice(0, 80)} ${b.text.slice(0, 80)}`);
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        }),
        { seed: SEED, numRuns: RUNS * 3, endOnFailure: true },
      );
      // The cases reached the handlers (not all refused at the door): some good input answered, several kinds of 4xx.
      const codes = [...statuses.keys()];
      expect(codes.some((c) => c < 300)).toBe(true);
      expect(codes.filter((c) => c >= 400).length).toBeGreaterThanOrEqual(3);
      expect(statuses.get(401) ?? 0).toBe(0);
    });

    it('a token whose tenant or sub holds a format or invisible character, or is not NFC, is a 401 naming the claim (attack: lee\\u200b)', async () => {
      const statuses = new Map<number, number>();
      await fc.assert(
        fc.asyncProperty(lookAlikeId, fc.constantFrom('tenant', 'user'), async (id, claim) => {
          const bad = mintToken(SECRET, {
            tenant: claim === 'tenant' ? id : 'acme',
            user: claim === 'user' ? id : 'fuzz',
            permissions: ALL_PERMISSIONS,
          });
          const res = await request(app.getHttpServer()).get('/agents').set('Authorization', `Bearer ${bad}`).timeout({ response: 20_000 });
          expectClean(res, `${claim} ${JSON.stringify(id)}`);
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          expect([JSON.stringify(id), res.status, res.body.message]).toEqual([
            JSON.stringify(id),
            401,
            expect.stringContaining(claim === 'tenant' ? '"tenant" claim' : '"sub" claim'),
          ]);
        }),
        { seed: SEED, numRuns: RUNS * 2, endOnFailure: true },
      );
      expect([...statuses.keys()]).toEqual([401]);
    });

    it('the audit CSV export never hands a spreadsheet a formula, whatever separator it splits on (attack: tool names with formula leads)', async () => {
      const names = fc.array(formulaLead, { minLength: 1, maxLength: 4 });
      const guard = new Guard({ allow: ['market.quote'] });
      await fc.assert(
        fc.asyncProperty(names, formulaLead, async (tools, agent) => {
          const ctx = createSkillContext({ guard, tenantId: 'acme', userId: 'fuzz', permissions: [], agent });
          for (const tool of tools) await app.get(SkillDispatcher).dispatch(ctx, tool, {});
          await app.get(AgentAuditLog).flush();
          const res = await send('get', `/admin/audit?format=csv&run=${ctx.runId}`).expect(200);
          const json = await send('get', `/admin/audit?run=${ctx.runId}`).expect(200);
          expect(json.body.entries).toHaveLength(tools.length); // (the embedded driver drops a value's leading U+FEFF)
          for (const separator of [',', ';', '\t']) {
            const ran = spreadsheetCells(res.text, separator).filter(runsAsFormula);
            expect([separator, ran]).toEqual([separator, []]);
          }
        }),
        { seed: SEED, numRuns: RUNS, endOnFailure: true },
      );
    });

    it('a decision refused for its body writes nothing: the proposal keeps its version, status and decisions', async () => {
      // A pending proposal of acme (the desk agent's third order waits for a desk lead).
      const run = await request(app.getHttpServer())
        .post('/agents/desk/runs')
        .set('Authorization', `Bearer ${mintToken(SECRET, { tenant: 'acme', user: 'alice' })}`)
        .send({ goal: 'place the orders' })
        .expect(200);
      const id = JSON.parse(run.body.steps[0].toolCalls[2].observation).proposalId as string;
      const read = async () => (await send('get', `/admin/approvals/${id}`).expect(200)).body;
      const before = await read();
      const ds = app.get(DataSource);
      const decisions = async () => Number((await ds.query('SELECT count(*) AS n FROM zmodu_approval_decisions'))[0].n);
      const decided = await decisions();
      await fc.assert(
        fc.asyncProperty(fc.constantFrom('approve', 'reject', 'preview'), body, async (verb, b) => {
          const res = await send('post', `/admin/approvals/${id}/${verb}`, b);
          expectClean(res, `${verb} ${b.text.slice(0, 80)}`);
          // Random bodies never carry the reason, version 1 and step 0 of a real decision together.
          expect([verb, res.status === 200 && verb !== 'preview']).toEqual([verb, false]);
        }),
        { seed: SEED, numRuns: RUNS * 2, endOnFailure: true },
      );
      expect(await read()).toEqual(before);
      expect(await decisions()).toBe(decided);
    });

    it('the dispatcher answers random arguments to every skill with a result, never a throw, a stack or a hang', async () => {
      const registry = app.get(SkillRegistry);
      const dispatcher = app.get(SkillDispatcher);
      const names = registry.definitions().map((s) => s.name);
      expect(names.length).toBeGreaterThan(10);
      const guard = new Guard({ allow: names, allowExecute: true });
      const args = fc.oneof(fc.dictionary(key, json, { maxKeys: 6 }), json);
      const outcomes = new Set<string>();
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...names, ...PROTO_KEYS, 'no.such.skill'), args, nastyString, async (name, a, tenant) => {
          const ctx = createSkillContext({
            guard,
            tenantId: tenant.length % 3 === 0 ? 'acme' : tenant.slice(0, 300),
            userId: 'fuzz',
            permissions: ALL_PERMISSIONS,
            agent: 'fuzz',
          });
          let timer: NodeJS.Timeout | undefined;
          const hang = new Promise<'hang'>((resolve) => (timer = setTimeout(() => resolve('hang'), 20_000)));
          const result = await Promise.race([dispatcher.dispatch(ctx, name, a), hang]).finally(() => clearTimeout(timer));
          expect([name, result === 'hang']).toEqual([name, false]);
          const r = result as { ok: boolean; error?: { error?: unknown; reason?: unknown; message?: unknown } };
          expect([name, typeof r.ok]).toEqual([name, 'boolean']);
          outcomes.add(r.ok ? 'ok' : String(r.error?.error));
          if (!r.ok) {
            expect([name, typeof r.error?.error]).toEqual([name, 'string']);
            expect([name, STACK.test(JSON.stringify(r.error) ?? '')]).toEqual([name, false]);
          }
        }),
        { seed: SEED, numRuns: RUNS * 5, endOnFailure: true },
      );
      // The calls met the guard, the schemas and the skills: several kinds of refusal (and some calls that went through).
      expect(outcomes.size).toBeGreaterThanOrEqual(3);
    });
  });

  describe('against the sample app on a compromised model', () => {
    let app: INestApplication;
    const model = new HostileModel();

    beforeAll(async () => {
      app = await apps.boot({ model: { provider: model } });
      apps.forget();
    });

    afterAll(async () => {
      await app?.close();
    });

    it('a run whose model makes up tool names and ids (very long, control characters) answers 200 and shows, audits and returns them bounded and printable', async () => {
      const token = mintToken(SECRET, { tenant: 'acme', user: 'fuzz' });
      let n = 0;
      await fc.assert(
        fc.asyncProperty(hostileTurn, async (turn) => {
          model.turn = turn;
          const runId = `fuzz-names-${String(++n).padStart(4, '0')}`;
          const res = await request(app.getHttpServer())
            .post('/agents/trader/runs')
            .set('Authorization', `Bearer ${token}`)
            .set('x-request-id', runId)
            .send({ goal: 'quote' })
            .timeout({ response: 20_000, deadline: 30_000 });
          const what = JSON.stringify(turn.map((c) => c.name.slice(0, 40)));
          expect([what, res.status]).toEqual([what, 200]);
          expect([what, STACK.test(res.text)]).toEqual([what, false]);
          // Bounded whatever the model sent (up to 200,000 characters a name): the answer does not grow with the names.
          const longest = Math.max(...turn.map((c) => c.name.length + c.id.length));
          expect([what, res.text.length < 20_000 + JSON.stringify(turn.map((c) => c.arguments)).length * 2]).toEqual([what, true]);
          const calls = (res.body.steps as Array<{ toolCalls: Array<{ id: string; name: string }> }>).flatMap((s) => s.toolCalls);
          expect(calls).toHaveLength(turn.length);
          const audit = await app.get(AgentAuditLog).query({ runId });
          expect(audit).toHaveLength(turn.length);
          for (const name of [...calls.map((c) => c.name), ...calls.map((c) => c.id), ...audit.map((a) => a.skill)]) {
            expect([what, Array.from(name).length <= 128 && !CONTROL.test(name)]).toEqual([what, true]);
            if (longest > 300) expect([what, name.length < 300]).toEqual([what, true]);
          }
        }),
        { seed: SEED, numRuns: RUNS, endOnFailure: true },
      );
    });
  });
});
