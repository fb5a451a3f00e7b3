import { canonicalJson } from '@zmodu/core';
import { commandArgsHash, commandKey } from './command-key';

describe('command keys and argument hashes', () => {
  it('the same arguments in any key order hash the same; different ones do not', () => {
    expect(commandArgsHash('order.cancel', { a: 1, b: { c: 2, d: 3 } })).toBe(commandArgsHash('order.cancel', { b: { d: 3, c: 2 }, a: 1 }));
    expect(commandArgsHash('order.cancel', { a: 1 })).not.toBe(commandArgsHash('order.cancel', { a: 2 }));
    expect(commandArgsHash('order.cancel', { a: 1 })).not.toBe(commandArgsHash('order.close', { a: 1 }));
  });

  it('a key named __proto__ (or constructor) is hashed as a key, not dropped', () => {
    const parsed = (text: string) => JSON.parse(text) as Record<string, unknown>;
    const mallory = parsed('{"n":1,"extra":{"__proto__":{"to":"mallory"}}}');
    const alice = parsed('{"n":1,"extra":{"__proto__":{"to":"alice"}}}');
    const none = parsed('{"n":1,"extra":{}}');
    expect(canonicalJson(mallory)).toBe('{"extra":{"__proto__":{"to":"mallory"}},"n":1}');
    expect(new Set([commandArgsHash('c', mallory), commandArgsHash('c', alice), commandArgsHash('c', none)]).size).toBe(3);
    expect(commandArgsHash('c', parsed('{"constructor":1}'))).not.toBe(commandArgsHash('c', {}));
  });

  it('keys of users and agents cannot collide through quoting', () => {
    expect(commandKey({ userId: 'A","ops', agent: undefined, runId: 'r' })).not.toBe(commandKey({ userId: 'A', agent: 'ops', runId: 'r' }));
  });
});
