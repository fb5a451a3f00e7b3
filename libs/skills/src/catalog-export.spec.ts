import { toOpenApi, toSkillsJson } from './catalog-export';
import { SkillRegistry } from './skill.registry';

describe('catalog export', () => {
  const registry = new SkillRegistry();
  registry.register({
    name: 'order.draft',
    action: 'propose',
    description: 'Draft an order. For review.',
    requiredPermission: 'order:draft',
    handler: () => 1,
  });
  registry.register({ name: 'market.quote', action: 'read', description: 'Quote', tenantScoped: false, handler: () => 1 });

  it('toSkillsJson lists every skill with its class, permission and schema, by name', () => {
    expect(toSkillsJson(registry)).toEqual([
      {
        name: 'market.quote',
        description: 'Quote',
        action: 'read',
        requiredPermission: null,
        tenantScoped: false,
        timeoutMs: 30000,
        parameters: expect.objectContaining({ type: 'object' }),
      },
      {
        name: 'order.draft',
        description: 'Draft an order. For review.',
        action: 'propose',
        requiredPermission: 'order:draft',
        tenantScoped: true,
        timeoutMs: 30000,
        parameters: expect.objectContaining({ type: 'object' }),
      },
    ]);
  });

  it('toOpenApi has one POST per skill with its schema as request body', () => {
    const doc = toOpenApi(registry, { title: 'T', basePath: '/api/skills/' }) as {
      openapi: string;
      paths: Record<string, { post: Record<string, unknown> }>;
    };
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toEqual(['/api/skills/market.quote', '/api/skills/order.draft']);
    expect(doc.paths['/api/skills/order.draft'].post).toMatchObject({
      operationId: 'order_draft',
      summary: 'Draft an order.',
      'x-zmodu-action': 'propose',
    });
  });
});
