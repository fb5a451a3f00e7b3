import { SkillRegistry } from '@zmodu/skills';
import { CommandSkill } from './command.skill';
import { InvalidCommandException } from './exceptions/invalid-command.exception';
import { ResolvedOutboxOptions } from './outbox.options';
import { OutboxStore } from './outbox.store';

describe('command.execute commands', () => {
  // The store is not reached: the commands are checked when the skill is built, at boot.
  const build = (parameters: Record<string, unknown>) =>
    new CommandSkill(
      {
        commands: [{ name: 'ledger.credit', parameters, handler: async () => ({ topic: 't', payload: {} }) }],
      } as unknown as ResolvedOutboxOptions,
      new SkillRegistry(),
      undefined as unknown as OutboxStore,
    );

  it('refuses at boot a command whose parameters have a keyword or a format the validator would ignore, naming the command and the path (attack: an unknown format let any account id through)', () => {
    const account = (over: Record<string, unknown>) => ({ type: 'object', properties: { account: { type: 'string', ...over } } });
    expect(() => build(account({ format: 'iban' }))).toThrow(InvalidCommandException);
    expect(() => build(account({ format: 'iban' }))).toThrow(
      /^OutboxModule: command 'ledger\.credit': parameters has format "iban" at #\/properties\/account, which the validator cannot check and would ignore/,
    );
    expect(() => build(account({ patern: '^[A-Z]{2}' }))).toThrow(
      /parameters has the keyword "patern" at #\/properties\/account, which the validator does not know/,
    );
    expect(() => build(account({ format: 'uuid' }))).not.toThrow();
  });
});
