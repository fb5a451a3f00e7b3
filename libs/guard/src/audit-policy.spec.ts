import { auditPolicy, policyNeedsAttention, ToolCatalog } from './audit-policy';

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
});
