import { Skill } from './skill.decorator';
import { InvalidSkillDefinitionException } from './exceptions/invalid-skill-definition.exception';
import { validateSkillOptions } from './validate-skill-options';

describe('@Skill', () => {
  it('fails when applied with a malformed name', () => {
    for (const name of ['Order.Draft', 'order..draft', '1order', 'order draft', '', 'a'.repeat(65), 'order.']) {
      expect(() => Skill({ name, description: 'x' })).toThrow(InvalidSkillDefinitionException);
    }
  });

  it('fails when applied with a schema that is not an object schema or not valid JSON Schema', () => {
    expect(() => Skill({ name: 'a.b', description: 'x', parameters: { type: 'string' } })).toThrow(/type: 'object'/);
    expect(() => Skill({ name: 'a.b', description: 'x', parameters: { type: 'object', properties: { q: { type: 'nonsense' } } } })).toThrow(
      /not a valid JSON Schema/,
    );
    expect(() => Skill({ name: 'a.b', description: 'x', parameters: [] as never })).toThrow(/JSON Schema object/);
  });

  it('fails when applied with a keyword or a format the validator would ignore, at import (attack: an unknown format was only a console warning)', () => {
    const parameters = { type: 'object', properties: { id: { type: 'string', format: 'objectid' } } };
    expect(() => Skill({ name: 'a.b', description: 'x', parameters })).toThrow(
      /^Invalid @Skill 'a\.b': parameters has format "objectid" at #\/properties\/id, which the validator cannot check/,
    );
  });

  it('fails on a missing description, a bad action, timeout, permission or cost', () => {
    expect(() => Skill({ name: 'a.b', description: ' ' })).toThrow(/description/);
    expect(() => Skill({ name: 'a.b', description: 'x', action: 'write' as never })).toThrow(/action must be/);
    expect(() => Skill({ name: 'a.b', description: 'x', timeoutMs: 0 })).toThrow(/timeoutMs/);
    expect(() => Skill({ name: 'a.b', description: 'x', requiredPermission: '' })).toThrow(/requiredPermission/);
    expect(() => Skill({ name: 'a.b', description: 'x', cost: -1 })).toThrow(/cost/);
  });

  it('makes an undeclared action execute and fills the defaults', () => {
    const o = validateSkillOptions({ name: 'custom.thing', description: 'does a thing' });
    expect(o.action).toBe('execute');
    expect(o.tenantScoped).toBe(true);
    expect(o.timeoutMs).toBe(30_000);
    expect(o.parameters).toMatchObject({ type: 'object' });
  });

  it('refuses to decorate something that is not a method', () => {
    const decorate = Skill({ name: 'a.b', description: 'x' });
    expect(() => decorate({}, 'prop', { value: 42 })).toThrow(/must decorate a method/);
  });
});
