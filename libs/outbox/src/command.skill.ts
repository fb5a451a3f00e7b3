import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { ValidateFunction } from 'ajv';
import { compileSchema, describeErrors, EMPTY_PARAMETERS, schemaProblem } from '@zmodu/skills/internal';
import { defineSkill, SkillError, SkillInvocation, SkillRegistry } from '@zmodu/skills';
import { commandArgsHash, commandKey, commandLockName } from './command-key';
import { InjectOutboxStore, OUTBOX_OPTIONS } from './outbox.constants';
import { CommandEventMissingException } from './exceptions/command-event-missing.exception';
import { InvalidCommandException } from './exceptions/invalid-command.exception';
import {
  COMMAND_DUPLICATE_MESSAGE,
  COMMAND_HANDLER_MESSAGE,
  COMMAND_NAME_MESSAGE,
  COMMAND_SCHEMA_MESSAGE,
  IDEMPOTENCY_CONFLICT_MESSAGE,
} from './outbox.messages';
import { ResolvedOutboxOptions } from './outbox.options';
import { OutboxStore } from './outbox.store';
import { CommandDefinition } from './outbox.types';

const COMMAND_NAME = /^[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)*$/;

/**
 * command.execute: an application command whose business write and outbox event commit together,
 * once per key (tenant, user, agent, run id), even when calls with one key arrive at once: the
 * command's transaction takes the key's lock before it looks the key up, so one handler body runs.
 */
@Injectable()
export class CommandSkill implements OnModuleInit {
  private readonly commands = new Map<string, CommandDefinition & { validate: ValidateFunction }>();

  constructor(
    @Inject(OUTBOX_OPTIONS) private readonly options: ResolvedOutboxOptions,
    private readonly registry: SkillRegistry,
    @InjectOutboxStore() private readonly store: OutboxStore,
  ) {
    for (const c of options.commands) {
      if (!c || typeof c.name !== 'string' || !COMMAND_NAME.test(c.name)) throw new InvalidCommandException(COMMAND_NAME_MESSAGE(c?.name));
      if (typeof c.handler !== 'function') throw new InvalidCommandException(COMMAND_HANDLER_MESSAGE(c.name));
      if (this.commands.has(c.name)) throw new InvalidCommandException(COMMAND_DUPLICATE_MESSAGE(c.name));
      const problem = schemaProblem(c.parameters ?? EMPTY_PARAMETERS);
      if (problem) throw new InvalidCommandException(COMMAND_SCHEMA_MESSAGE(c.name, problem));
      this.commands.set(c.name, { ...c, validate: compileSchema(c.parameters ?? EMPTY_PARAMETERS) });
    }
  }

  onModuleInit(): void {
    if (this.commands.size === 0) return;
    const names = [...this.commands.keys()];
    this.registry.register(
      defineSkill({
        name: 'command.execute',
        action: 'execute',
        // Keyed by the caller and the run: a call made again answers the first one's event (see the command key).
        idempotent: true,
        source: 'OutboxModule',
        requiredPermission: this.options.commandPermission,
        description:
          `Execute an application command: ${[...this.commands.values()].map((c) => `${c.name}${c.description ? ` (${c.description})` : ''}`).join('; ')}. ` +
          'Its effect commits with an outbox event; the same run never executes a command twice (the same command and arguments again ' +
          'return the first event, replayed: true; another command or other arguments under the run id are refused). Returns the event id.',
        parameters: {
          type: 'object',
          properties: { command: { type: 'string', enum: names }, args: { type: 'object' } },
          required: ['command'],
          additionalProperties: false,
        } as const,
        handler: (args, ctx) => this.execute(args.command, args.args ?? {}, ctx),
      }),
    );
  }

  async execute(name: string, args: Record<string, unknown>, ctx: SkillInvocation): Promise<{ eventId: string; replayed: boolean }> {
    if (!ctx.runId) throw new SkillError('run_id_required', 'command.execute needs a run id: it is the idempotency key.');
    const command = this.commands.get(name);
    if (!command) throw new SkillError('unknown_command', `No command '${name}'.`);
    if (!command.validate(args))
      throw new SkillError(
        'invalid_arguments',
        `The arguments of ${name} do not match its parameters.`,
        { problems: describeErrors(command.validate.errors) },
        'InvalidArguments',
      );
    const tenantId = ctx.tenantId ?? null;
    const key = commandKey(ctx);
    const argsHash = commandArgsHash(name, args);
    return this.store.transaction(async (transaction) => {
      // One holder of the key at a time; the lookup after the lock sees what an earlier holder committed.
      if (!(await this.store.lockKey(transaction, commandLockName(tenantId, key), this.options.commandLockWaitMs)))
        throw new SkillError(
          'command_in_progress',
          `Another call with run id ${ctx.runId} is executing ${name} now: try again in a moment (it answers with that call's event).`,
          {
            retryable: true,
          },
        );
      const prior = await this.store.findByKey(tenantId, key, transaction);
      if (prior) {
        if (prior.command?.name === name && prior.command.argsHash === argsHash) return { eventId: prior.id, replayed: true };
        const stored = prior.command?.name ?? '(an event that is not a command)';
        throw new SkillError('idempotency_conflict', IDEMPOTENCY_CONFLICT_MESSAGE(ctx.runId, stored, name), { storedCommand: stored });
      }
      const event = await command.handler(args, { transaction, invocation: ctx });
      if (!event || typeof event.topic !== 'string' || event.topic === '') throw new CommandEventMissingException(name);
      const eventId = await this.store.enqueue(transaction, {
        tenantId,
        topic: event.topic,
        payload: event.payload,
        idempotencyKey: key,
        maxAttempts: this.options.maxAttempts,
        command: { name, argsHash },
      });
      return { eventId, replayed: false };
    });
  }
}
