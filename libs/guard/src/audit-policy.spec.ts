import { Guard } from './guard';
import { auditPolicy, isAdminSkill, policyNeedsAttention, ToolCatalog } from './audit-policy';

const catalog: ToolCatalog = {
  list: () => [
    { name: 'market.quote', action: 'read' },
    { name: 'order.draft', action: 'propose' },
    { name: 'order.submit', action: 'execute' },
  ],
};

describe('auditPolicy', () => {
  it('reports an inert policy', () => {
    const h = auditPolicy(catalog, { allow: [], allowExecute: false });
    expect(h.inert).toBe(true);
    expect(h.effectiveTools).toEqual([]);
    expect(policyNeedsAttention(h)).toBe(true);
  });

  it('reports a class blind spot: an execute tool allowed by name while allowExecute is false', () => {
    const h = auditPolicy(catalog, { allow: ['order.submit'], allowExecute: false });
    expect(h.inert).toBe(false); // the guard sees names: not inert, yet it permits nothing
    expect(h.classDeniedTools).toEqual(['order.submit']);
    expect(h.hasClassBlindSpot).toBe(true);
    expect(h.effectiveTools).toEqual([]);
  });

  it('lists unknown names from both lists', () => {
    const h = auditPolicy(catalog, { allow: ['market.quote', 'ghost'], deny: ['phantom'] });
    expect(h.unknownTools).toEqual(['ghost', 'phantom']);
  });

  it('is clean for a healthy read/propose policy', () => {
    const h = auditPolicy(catalog, { allow: ['market.quote', 'order.draft'], allowExecute: false });
    expect(h).toEqual({
      inert: false,
      unknownTools: [],
      classDeniedTools: [],
      hasClassBlindSpot: false,
      effectiveTools: ['market.quote', 'order.draft'],
      adminByFilter: [],
    });
    expect(policyNeedsAttention(h)).toBe(false);
  });

  it('does not report a denied execute tool as a blind spot', () => {
    const h = auditPolicy(catalog, { allow: ['order.submit', 'market.quote'], deny: ['order.submit'] });
    expect(h.classDeniedTools).toEqual([]);
    expect(h.effectiveTools).toEqual(['market.quote']);
  });

  it('counts execute tools as effective when allowExecute is true', () => {
    const h = auditPolicy(catalog, { allow: ['order.submit'], allowExecute: true });
    expect(h.hasClassBlindSpot).toBe(false);
    expect(h.effectiveTools).toEqual(['order.submit']);
  });

  describe('admin skills reached by a filter (adminByFilter)', () => {
    const withAdmin: ToolCatalog = {
      list: () => [
        ...catalog.list(),
        { name: 'admin.cache.clear', action: 'execute' },
        { name: 'admin.cache.invalidate', action: 'execute' },
        { name: 'admin.config.get', action: 'read' },
        { name: 'admin.config.set', action: 'execute' },
        { name: 'administer.me', action: 'read' },
      ],
    };

    it('flags an allow list with a pattern that would include an admin skill, which the guard never lets through', () => {
      for (const pattern of ['*', 'admin.*', 'admin.c*', 'admin.cache.?lear', '*.get']) {
        const policy = { allow: ['market.quote', pattern], allowExecute: true };
        const h = auditPolicy(withAdmin, policy);
        expect(h.adminByFilter.length).toBeGreaterThan(0);
        expect(h.adminByFilter.every(isAdminSkill)).toBe(true);
        expect(policyNeedsAttention(h)).toBe(true);
        // The guard matches names exactly: the pattern reaches no admin skill (nor anything else).
        const guard = new Guard(policy);
        for (const { name, action } of withAdmin.list().filter((t) => isAdminSkill(t.name)))
          expect(guard.evaluate(action, name)).toMatchObject({ allowed: false, cause: 'denied_not_listed' });
      }
      expect(auditPolicy(withAdmin, { allow: ['admin.*'] }).adminByFilter).toEqual([
        'admin.cache.clear',
        'admin.cache.invalidate',
        'admin.config.get',
        'admin.config.set',
      ]);
      expect(auditPolicy(withAdmin, { allow: ['admin.cache.?lear'] }).adminByFilter).toEqual(['admin.cache.clear']);
      // A pattern matches whole names; '?' is any one character, a dot only a dot.
      expect(auditPolicy(withAdmin, { allow: ['admin?config.get'] }).adminByFilter).toEqual(['admin.config.get']);
      expect(auditPolicy(withAdmin, { allow: ['admin.cache'] }).adminByFilter).toEqual([]);
    });

    it('flags the admin skills an agent skills filter offers, less those the allow list names exactly', () => {
      const offered = withAdmin.list().map((t) => t.name);
      const h = auditPolicy(withAdmin, { allow: ['market.quote', 'admin.config.get'] }, { offeredByFilter: offered });
      expect(h.adminByFilter).toEqual(['admin.cache.clear', 'admin.cache.invalidate', 'admin.config.set']);
      expect(policyNeedsAttention(h)).toBe(true);
      // Named exactly: allowed on purpose, nothing to flag.
      const named = auditPolicy(
        withAdmin,
        { allow: ['admin.config.get', 'admin.config.set', 'admin.*'], allowExecute: true },
        { offeredByFilter: ['admin.config.get', 'admin.config.set', 'admin.ghost'] },
      );
      expect(named.adminByFilter).toEqual(['admin.cache.clear', 'admin.cache.invalidate']);
      expect(auditPolicy(withAdmin, { allow: ['admin.config.get'] }, { offeredByFilter: ['admin.config.get'] }).adminByFilter).toEqual([]);
    });

    it('does not flag exact names, nor names that only start like admin', () => {
      const h = auditPolicy(withAdmin, { allow: ['admin.config.get', 'admin.config.set', 'administer.me'], allowExecute: true });
      expect(h.adminByFilter).toEqual([]);
      expect(policyNeedsAttention(h)).toBe(false);
      expect(auditPolicy(withAdmin, { allow: ['adminis*'] }).adminByFilter).toEqual([]);
    });
  });
});
