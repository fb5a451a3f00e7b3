import fc from 'fast-check';
import { reviewByRules, RiskRules } from './risk-review';

/** Every name Object.prototype answers to, and then some. */
const PROTOTYPE_NAMES = [...Object.getOwnPropertyNames(Object.prototype), '__proto__', 'prototype'];

describe('reviewByRules: lookups by a name the caller chooses', () => {
  const rules: RiskRules = {
    tenantLimits: { acme: 500_000, '*': 50_000 },
    thresholds: { 'order.submit': { escalateAt: 10_000, rejectAt: 900_000 } },
  };

  it.each(PROTOTYPE_NAMES)('a tenant named %j gets the "*" limit, not a prototype member', (tenantId) => {
    expect(reviewByRules(rules, { action: 'order.submit', payload: {}, amount: 60_000 }, { tenantId }, 0)).toEqual({
      verdict: 'reject',
      reason: 'amount 60000 is over the tenant limit of 50000',
    });
  });

  it.each(PROTOTYPE_NAMES)('an action named %j has no threshold (none was declared for it)', (action) => {
    expect(reviewByRules(rules, { action, payload: {}, amount: 20_000 }, { tenantId: 'acme' }, 0)).toEqual({ verdict: 'approve' });
  });

  it('property: the "*" limit applies to every tenant that is not listed', () => {
    const tenant = fc.oneof(fc.constantFrom(...PROTOTYPE_NAMES), fc.string({ maxLength: 20 })).filter((t) => t !== 'acme' && t !== '*');
    fc.assert(
      fc.property(tenant, fc.integer({ min: 1, max: 2_000_000 }), (tenantId, amount) => {
        const out = reviewByRules(rules, { action: 'order.submit', payload: {}, amount }, { tenantId }, 0);
        if (amount > 50_000) expect(out).toEqual({ verdict: 'reject', reason: `amount ${amount} is over the tenant limit of 50000` });
        else expect(out.verdict).toBe(amount >= 10_000 ? 'escalate' : 'approve');
      }),
      { numRuns: 500, seed: 9 },
    );
  });

  it('property: over tenant ids and action names (prototype names among them), "*" binds every unlisted tenant and no unlisted action has a threshold', () => {
    const name = fc.oneof(fc.constantFrom(...PROTOTYPE_NAMES), fc.string({ maxLength: 20 }));
    fc.assert(
      fc.property(
        name.filter((t) => t !== 'acme' && t !== '*'),
        name.filter((a) => a !== 'order.submit'),
        fc.integer({ min: 0, max: 2_000_000 }),
        (tenantId, action, amount) => {
          const out = reviewByRules(rules, { action, payload: {}, amount }, { tenantId }, 0);
          expect(out).toEqual(
            amount > 50_000 ? { verdict: 'reject', reason: `amount ${amount} is over the tenant limit of 50000` } : { verdict: 'approve' },
          );
        },
      ),
      { numRuns: 1000, seed: 11 },
    );
  });

  it('a missing or unusable amount rejects where a limit or threshold applies, and passes only where none does', () => {
    for (const amount of [null, Number.NaN, -1, Number.POSITIVE_INFINITY])
      expect(reviewByRules(rules, { action: 'order.submit', payload: {}, amount }, { tenantId: 'acme' }, 0)).toMatchObject({
        verdict: 'reject',
        reason: expect.stringContaining('unknown'),
      });
    expect(
      reviewByRules(
        { thresholds: { 'order.submit': { escalateAt: 1 } } },
        { action: 'note.add', payload: {}, amount: null },
        { tenantId: 'acme' },
        0,
      ),
    ).toEqual({ verdict: 'approve' });
  });
});
