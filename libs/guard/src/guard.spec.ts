import { Guard } from './guard';
import { InvalidPolicyException } from './exceptions/invalid-policy.exception';
import { normalizeActionClass } from './action-class';

describe('Guard', () => {
  const policy = { allow: ['market.quote', 'order.draft', 'order.submit', 'both'], deny: ['both', 'denied.only'], allowExecute: false };

  it('refuses a name on both lists as denied_explicitly (deny is evaluated first)', () => {
    const g = new Guard(policy);
    expect(g.check('read', 'both')).toEqual({ allowed: false, cause: 'denied_explicitly' });
    expect(g.check('read', 'denied.only').cause).toBe('denied_explicitly');
  });

  it('refuses a name missing from the allow list as denied_not_listed', () => {
    expect(new Guard(policy).check('read', 'db.query')).toEqual({ allowed: false, cause: 'denied_not_listed' });
  });

  it('refuses a listed execute-class call while allowExecute is false', () => {
    const g = new Guard(policy);
    expect(g.check('execute', 'order.submit')).toEqual({ allowed: false, cause: 'denied_execute_class' });
    expect(g.check('read', 'market.quote').allowed).toBe(true);
    expect(g.check('propose', 'order.draft').allowed).toBe(true);
  });

  it('lets a listed execute call through when allowExecute is true', () => {
    expect(new Guard({ ...policy, allowExecute: true }).check('execute', 'order.submit').allowed).toBe(true);
  });

  it('checks the class gate before the budget, and the budget last', () => {
    const g = new Guard({ ...policy, budget: 10 });
    expect(g.check('execute', 'order.submit', 100).cause).toBe('denied_execute_class');
    expect(g.check('read', 'market.quote', 11).cause).toBe('denied_budget');
    expect(g.check('read', 'market.quote', 10).allowed).toBe(true);
    expect(g.check('read', 'market.quote', 1).cause).toBe('denied_budget');
  });

  it('spends no budget on a denied call', () => {
    const g = new Guard({ ...policy, budget: 100 });
    g.check('read', 'unlisted', 40);
    g.check('read', 'both', 40);
    g.check('execute', 'order.submit', 40);
    g.check('read', 'market.quote', 101);
    expect(g.spent).toBe(0);
    expect(g.remainingBudget).toBe(100);
    g.check('read', 'market.quote', 30);
    expect(g.spent).toBe(30);
  });

  it('counts allowed calls and each denial cause', () => {
    const g = new Guard({ ...policy, budget: 5 });
    g.check('read', 'market.quote', 1);
    g.check('read', 'market.quote', 1);
    g.check('read', 'both');
    g.check('read', 'nope');
    g.check('read', 'nope');
    g.check('execute', 'order.submit');
    g.check('read', 'market.quote', 50);
    expect(g.getStats()).toEqual({
      allowed: 2,
      denied: 5,
      denied_explicitly: 1,
      denied_not_listed: 2,
      denied_execute_class: 1,
      denied_budget: 1,
      denied_staged: 0,
      denied_turn_cap: 0,
    });
  });

  it('evaluate() neither counts nor spends; commit() does', () => {
    const g = new Guard({ ...policy, budget: 10 });
    const d = g.evaluate('read', 'market.quote', 4);
    expect(g.getStats().allowed).toBe(0);
    g.commit(d, 4);
    expect(g.getStats().allowed).toBe(1);
    expect(g.spent).toBe(4);
  });

  it('spend() shrinks the budget seen by later calls', () => {
    const g = new Guard({ ...policy, budget: 10 });
    g.spend(10);
    expect(g.check('read', 'market.quote', 1).cause).toBe('denied_budget');
  });

  it('treats an unknown action class as execute (fail closed)', () => {
    expect(normalizeActionClass(undefined)).toBe('execute');
    expect(normalizeActionClass('write')).toBe('execute');
    const g = new Guard(policy);
    expect(g.check('write' as never, 'market.quote').cause).toBe('denied_execute_class');
  });

  it('reports inert policies', () => {
    expect(new Guard({ allow: [] }).isInert()).toBe(true);
    expect(new Guard({ allow: ['a'], deny: ['a'] }).isInert()).toBe(true);
    expect(new Guard({ allow: ['a'], budget: 0 }).isInert()).toBe(true);
    expect(new Guard({ allow: ['a'] }).isInert()).toBe(false);
  });

  it('rejects a malformed policy with a message that shows the shape', () => {
    expect(() => new Guard(undefined as never)).toThrow(InvalidPolicyException);
    expect(() => new Guard({ allow: 'a' } as never)).toThrow(/allow` must be an array/);
    expect(() => new Guard({ allow: [''] })).toThrow(/non-empty string/);
    expect(() => new Guard({ allow: [], budget: -1 })).toThrow(/budget/);
    expect(() => new Guard({ allow: [], allowExecute: 'yes' } as never)).toThrow(/allowExecute/);
  });

  it('rejects a negative or non-finite cost', () => {
    const g = new Guard(policy);
    expect(() => g.check('read', 'market.quote', -1)).toThrow(RangeError);
    expect(() => g.check('read', 'market.quote', Number.NaN)).toThrow(RangeError);
  });

  it('shares counters between guards given the same stats', () => {
    const a = new Guard(policy);
    const b = new Guard(policy, { stats: a.stats });
    a.check('read', 'market.quote');
    b.check('read', 'nope');
    expect(a.getStats()).toMatchObject({ allowed: 1, denied_not_listed: 1 });
  });
});
