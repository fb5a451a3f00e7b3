import { Guard } from './guard';
import { GuardPolicy } from './guard-policy';
import { ownOptions, ownValue } from '@zmodu/core';

class Defaults {
  limit = 5;
  mode = 'required';
}

describe('own keys only', () => {
  it('ownValue finds no Object.prototype member for a caller-named key', () => {
    const limits: Record<string, number> = { acme: 3 };
    expect(ownValue(limits, 'acme')).toBe(3);
    for (const key of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) expect(ownValue(limits, key)).toBeUndefined();
  });

  it('ownOptions drops __proto__, constructor, prototype and undefined values, so a merge keeps its defaults and prototype', () => {
    const hostile = JSON.parse('{"__proto__": {"limit": 1, "allowExecute": true}, "constructor": {"x": 1}, "mode": "off", "limit": null}');
    const merged = Object.assign(new Defaults(), ownOptions(hostile), ownOptions({ limit: undefined }));
    expect(Object.getPrototypeOf(merged)).toBe(Defaults.prototype);
    expect(merged).toEqual(Object.assign(new Defaults(), { mode: 'off', limit: null }));
    expect((merged as unknown as Record<string, unknown>).allowExecute).toBeUndefined();
    expect(ownOptions(undefined)).toEqual({});
    expect(ownOptions('x' as unknown as object)).toEqual({});
  });

  it('a guard reads only the policy own fields: allowExecute lent by a prototype does not switch execute on', () => {
    const policy = JSON.parse('{"allow": ["order.submit"], "__proto__": {"allowExecute": true, "budget": 1e9}}') as GuardPolicy;
    const viaAssign = Object.assign(Object.create({ allowExecute: true }), { allow: ['order.submit'] }) as GuardPolicy;
    for (const p of [policy, viaAssign]) {
      const guard = new Guard(p);
      expect(guard.check('execute', 'order.submit')).toMatchObject({ allowed: false, cause: 'denied_execute_class' });
    }
    expect(new Guard({ allow: ['order.submit'], allowExecute: true }).check('execute', 'order.submit').allowed).toBe(true);
  });
});
