import { INestApplication } from '@nestjs/common';
import { GuardModule } from '@zmodu/guard';
import { SkillsModule } from '@zmodu/skills';
import request from 'supertest';
import { as, DeskSkills, startAdminApp } from './__fixtures__/admin-fixtures';
import { validateOpenApi } from './__fixtures__/validate-openapi';

describe('GET /admin/skills and /admin/skills/openapi.json', () => {
  let app: INestApplication;
  const names = (res: request.Response) => (res.body as Array<{ name: string }>).map((s) => s.name);

  beforeAll(async () => {
    app = await startAdminApp(
      [GuardModule.forRoot({ auditStore: 'memory', quotaStore: 'memory' }), SkillsModule.forRoot()],
      {
        skills: true,
        // globex's plan has no execute-class skills: its admins do not see them.
        skillVisible: (skill, caller) => caller.tenantId !== 'globex' || skill.action !== 'execute',
        skillsOpenApi: { title: 'desk skills', basePath: '/api/skills' },
      },
      [DeskSkills],
    );
  });

  afterAll(async () => {
    await app?.close();
  });

  it('answers 401 without a caller and 403 without admin:skills, on both endpoints', async () => {
    for (const path of ['/admin/skills', '/admin/skills/openapi.json']) {
      await request(app.getHttpServer()).get(path).expect(401);
      const denied = await request(app.getHttpServer())
        .get(path)
        .set(as('acme', 'market:read', 'order:submit'))
        .expect(403);
      expect(denied.body.message).toBe('Missing permission: admin:skills.');
    }
  });

  it('lists only the skills whose permission the caller holds, as skills JSON', async () => {
    const plain = await request(app.getHttpServer()).get('/admin/skills').set(as('acme', 'admin:skills')).expect(200);
    expect(names(plain)).toEqual(['ledger.close', 'market.quote']);
    expect(plain.body[1]).toEqual({
      name: 'market.quote',
      description: 'Quote a symbol.',
      action: 'read',
      requiredPermission: null,
      tenantScoped: true,
      timeoutMs: 30_000,
      parameters: { type: 'object', properties: { symbol: { type: 'string' } }, required: ['symbol'] },
    });
    const reader = await request(app.getHttpServer())
      .get('/admin/skills')
      .set(as('acme', 'admin:skills', 'market:read'))
      .expect(200);
    expect(names(reader)).toEqual(['ledger.close', 'market.depth', 'market.quote']);
    const all = await request(app.getHttpServer())
      .get('/admin/skills')
      .set(as('acme', 'admin:skills', 'market:read', 'order:submit'))
      .expect(200);
    expect(names(all)).toEqual(['ledger.close', 'market.depth', 'market.quote', 'order.submit']);
  });

  it("leaves out what the skillVisible option refuses for the caller's tenant", async () => {
    const globex = await request(app.getHttpServer())
      .get('/admin/skills')
      .set(as('globex', 'admin:skills', 'market:read', 'order:submit'))
      .expect(200);
    expect(names(globex)).toEqual(['market.depth', 'market.quote']);
  });

  it('answers the same catalog as a valid OpenAPI 3.1 document, with the options given', async () => {
    const res = await request(app.getHttpServer())
      .get('/admin/skills/openapi.json')
      .set(as('acme', 'admin:skills', 'market:read'))
      .expect(200);
    expect(res.body).toMatchObject({ openapi: '3.1.0', info: { title: 'desk skills' } });
    expect(Object.keys(res.body.paths)).toEqual(['/api/skills/ledger.close', '/api/skills/market.depth', '/api/skills/market.quote']);
    expect(res.body.paths['/api/skills/market.depth'].post['x-zmodu-required-permission']).toBe('market:read');
    expect(await validateOpenApi(res.body)).toEqual({ valid: true });
    const globex = await request(app.getHttpServer()).get('/admin/skills/openapi.json').set(as('globex', 'admin:skills')).expect(200);
    expect(Object.keys(globex.body.paths)).toEqual(['/api/skills/market.quote']);
  });
});
