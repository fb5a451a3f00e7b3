import { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AgentModule, ScriptedModelProvider } from '@zmodu/agent';
import { ZMODU_GUARD_MIGRATIONS } from '@zmodu/guard';
import { OutboxModule, ZMODU_OUTBOX_MIGRATIONS } from '@zmodu/outbox';
import { PipelineModule, ZMODU_PIPELINE_MIGRATIONS } from '@zmodu/pipeline';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import { DeskSkills, startAdminApp } from './__fixtures__/admin-fixtures';
import { servedRoutes } from './__fixtures__/express-routes';
import { validateOpenApi } from './__fixtures__/validate-openapi';

type Operation = {
  tags?: string[];
  summary?: string;
  security?: Array<Record<string, string[]>>;
  responses: Record<string, unknown>;
  parameters?: Array<{ name: string; in: string; schema?: unknown }>;
  requestBody?: unknown;
};

describe('the admin endpoints in an OpenAPI document (@nestjs/swagger)', () => {
  let db: TestDatabase;
  let app: INestApplication;
  let document: OpenAPIObject;
  const operation = (route: string): Operation => {
    const [method, path] = route.split(' ');
    return (document.paths[path] as Record<string, Operation>)[method];
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await startAdminApp(
      [
        TypeOrmModule.forRoot(
          await db.options({
            migrations: [...ZMODU_GUARD_MIGRATIONS, ...ZMODU_PIPELINE_MIGRATIONS, ...ZMODU_OUTBOX_MIGRATIONS],
            migrationsRun: true,
          }),
        ),
        AgentModule.forRoot({
          agents: [
            {
              name: 'analyst',
              provider: new ScriptedModelProvider([{ text: 'done' }]),
              skills: ['market.quote'],
              guard: { allow: ['market.quote'] },
            },
          ],
        }),
        PipelineModule.forRoot({ actions: {}, recoveryIntervalMs: 0 }),
        OutboxModule.forRoot({ relay: { autoStart: false } }),
      ],
      { approvals: true, outbox: true, audit: true, agents: true, quota: true, skills: true },
      [DeskSkills],
    );
    document = SwaggerModule.createDocument(app, new DocumentBuilder().setTitle('admin').addBearerAuth().build());
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('is a valid OpenAPI document naming every admin route served', async () => {
    expect(await validateOpenApi(document)).toEqual({ valid: true });
    const served = servedRoutes(app, '/admin');
    expect(served).toEqual([
      'get /admin/agents',
      'get /admin/approvals',
      'get /admin/approvals/{id}',
      'get /admin/approvals/{id}/run',
      'get /admin/approvals/{id}/schema',
      'get /admin/audit',
      'get /admin/audit/verify',
      'get /admin/outbox',
      'get /admin/outbox/{id}',
      'get /admin/quota',
      'get /admin/skills',
      'get /admin/skills/openapi.json',
      'post /admin/approvals/{id}/approve',
      'post /admin/approvals/{id}/preview',
      'post /admin/approvals/{id}/reject',
      'post /admin/outbox/{id}/retry',
    ]);
    for (const route of served) expect([route, operation(route) !== undefined]).toEqual([route, true]);
  });

  it('documents each admin operation: a tag, a summary, bearer security, its answers and its parameters', () => {
    for (const route of servedRoutes(app, '/admin')) {
      const op = operation(route);
      expect([route, op.tags?.[0]]).toEqual([route, expect.stringMatching(/^admin: [a-z]+$/)]);
      expect([route, typeof op.summary]).toEqual([route, 'string']);
      expect([route, op.security]).toEqual([route, [{ bearer: [] }]]);
      expect([route, Object.keys(op.responses).sort()]).toEqual([route, expect.arrayContaining(['200', '401', '403'])]);
      for (const name of route.match(/\{(\w+)\}/g) ?? [])
        expect([route, op.parameters?.find((p) => p.in === 'path' && `{${p.name}}` === name)?.schema]).toEqual([
          route,
          { type: 'string', format: 'uuid' },
        ]);
    }
    expect(operation('post /admin/approvals/{id}/approve').requestBody).toMatchObject({
      content: { 'application/json': { schema: { required: ['reason', 'version', 'step'] } } },
    });
    const query = (route: string) =>
      (operation(route).parameters ?? [])
        .filter((p) => p.in === 'query')
        .map((p) => p.name)
        .sort();
    expect(query('get /admin/quota')).toEqual(['agent', 'limit', 'period', 'tenant']);
    expect(query('get /admin/approvals')).toEqual(['limit', 'page', 'status']);
    expect(query('get /admin/outbox')).toEqual(['limit', 'page', 'status']);
    expect(query('get /admin/audit/verify')).toEqual(['tenant']);
    expect(query('get /admin/audit')).toEqual([
      'agent',
      'cursor',
      'decision',
      'format',
      'kind',
      'limit',
      'run',
      'since',
      'skill',
      'tenant',
      'until',
      'user',
    ]);
    expect(Object.keys((operation('get /admin/audit').responses['200'] as { content: object }).content).sort()).toEqual([
      'application/json',
      'text/csv',
    ]);
    expect(Object.keys(operation('get /admin/quota').responses).sort()).toEqual(['200', '400', '401', '403', '501']);
  });
});
