import { DuplicateSkillException } from './exceptions/duplicate-skill.exception';
import { InvalidSkillDefinitionException } from './exceptions/invalid-skill-definition.exception';
import { UnknownSkillException } from './exceptions/unknown-skill.exception';
import { SkillRegistry } from './skill.registry';

describe('SkillRegistry', () => {
  const handler = () => 'ok';

  it('registers, lists, gets and removes dynamic skills', () => {
    const r = new SkillRegistry();
    r.register({ name: 'b.two', description: 'two', action: 'read', handler });
    r.register({ name: 'a.one', description: 'one', handler });
    expect(r.list().map((s) => [s.name, s.action])).toEqual([
      ['a.one', 'execute'],
      ['b.two', 'read'],
    ]);
    expect(r.get('b.two')?.description).toBe('two');
    r.remove('b.two');
    expect(r.has('b.two')).toBe(false);
    expect(() => r.remove('b.two')).toThrow(UnknownSkillException);
    expect(() => r.remove('b.two')).toThrow(/no such skill/);
  });

  it('refuses a duplicate name and names both sources', () => {
    const r = new SkillRegistry();
    r.register({ name: 'a.one', description: 'one', handler, source: 'First.method' });
    const attempt = () => r.register({ name: 'a.one', description: 'again', handler, source: 'Second.method' });
    expect(attempt).toThrow(DuplicateSkillException);
    expect(attempt).toThrow(/First\.method.*Second\.method/);
  });

  it('refuses a registration without a handler or with a bad declaration', () => {
    const r = new SkillRegistry();
    expect(() => r.register({ name: 'a.one', description: 'x' } as never)).toThrow(/needs a handler/);
    expect(() => r.register({ name: 'A', description: 'x', handler })).toThrow(/name must be/);
  });

  it("takes audit: { args, result } of 'full' or 'digest' (default full) and refuses anything else", () => {
    const r = new SkillRegistry();
    expect(r.register({ name: 'a.plain', description: 'x', handler }).audit).toEqual({ args: 'full', result: 'full' });
    expect(r.register({ name: 'a.digest', description: 'x', handler, audit: { result: 'digest' } }).audit).toEqual({
      args: 'full',
      result: 'digest',
    });
    const bad = (audit: unknown) => () => r.register({ name: 'a.bad', description: 'x', handler, audit: audit as never });
    expect(bad('digest')).toThrow(/audit must be an object such as \{ args: 'digest', result: 'digest' \}/);
    expect(bad({ args: 'hash' })).toThrow(/audit\.args must be 'full' or 'digest' \(got "hash"\)/);
    expect(bad({ observation: 'digest' })).toThrow(/audit\.observation: no such field/);
    expect(bad(Object.create({ result: 'digest' }))).not.toThrow(); // inherited keys are not read: the default, full
  });

  it('compiles the argument schema once at registration', () => {
    const r = new SkillRegistry();
    const s = r.register({
      name: 'q.one',
      description: 'x',
      parameters: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
      handler,
    });
    expect(s.validate({ n: 1 })).toBe(true);
    expect(s.validate({ n: 'x' })).toBe(false);
    expect(r.get('q.one')?.validate).toBe(s.validate);
  });

  it('refuses a registration whose schema has a keyword or a format the validator would ignore, naming the skill, the path and what to do (attack: format "uuid" was ignored with a console warning)', () => {
    const r = new SkillRegistry();
    const register = (id: Record<string, unknown>) =>
      r.register({ name: 'order.lookup', description: 'x', parameters: { type: 'object', properties: { id } }, handler });
    expect(() => register({ type: 'string', format: 'guid' })).toThrow(InvalidSkillDefinitionException);
    expect(() => register({ type: 'string', format: 'guid' })).toThrow(
      /^Invalid @Skill 'order\.lookup': parameters has format "guid" at #\/properties\/id, which the validator cannot check and would ignore: use one of .*uuid.*, or a pattern\.$/,
    );
    expect(() => register({ type: 'string', uuid: true })).toThrow(
      /^Invalid @Skill 'order\.lookup': parameters has the keyword "uuid" at #\/properties\/id, which the validator does not know and would ignore: remove it, or spell a JSON Schema/,
    );
    expect(r.has('order.lookup')).toBe(false);
    expect(register({ type: 'string', format: 'uuid' }).validate({ id: 'not-a-uuid' })).toBe(false);
  });
});
