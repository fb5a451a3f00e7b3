import {
  ConfigurableModuleBuilder,
  Inject,
  Injectable,
  Module,
  OnApplicationBootstrap,
  OnApplicationShutdown,
  OnModuleInit,
} from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import { ValidateFunction } from 'ajv';
import { DataSource } from 'typeorm';
import { SkillError } from '@zmodu/skills';
import { compileSchema, describeErrors, EMPTY_PARAMETERS, schemaProblem } from '@zmodu/skills';
import { SkillInvocation } from '@zmodu/skills';
import { SkillRegistry } from '@zmodu/skills';
import { commandArgsHash, commandKey, commandLockName } from './command-key';
import { OutboxRelay, RelayOptions } from './outbox-relay';
import { IDEMPOTENCY_CONFLICT_MESSAGE } from './outbox.messages';
import { InjectOutboxStore, OUTBOX_STORE, OutboxStore } from './outbox.store';
import { OutboxService } from './outbox.service';
import { CommandDefinition, OutboxHandler } from './outbox.types';
import { TypeOrmOutboxStore } from './typeorm-outbox.store';

export class OutboxModuleOptions {
  /** Application commands for command.execute. */
  commands?: CommandDefinition[] = [];
  /** Delivery handlers by topic (more can be added with OutboxRelay.on). */
  handlers?: Record<string, OutboxHandler> = {};
  /** The in-process relay; `autoStart: false` leaves starting it to you (e.g. one worker process). */
  relay?: RelayOptions & { autoStart?: boolean } = {};
  /** Attempts before an event is dead-lettered. Default 5. */
  maxAttempts?: number = 5;
  /** Permission command.execute requires. Default 'command:execute'. */
  commandPermission?: string = 'command:execute';
  /** Where events live. Default a TypeOrmOutboxStore on the app's TypeORM DataSource; yours must pass outboxStoreContract. */
  store?: OutboxStore;
  /**
   * How long a command.execute waits for another call holding the same key (each waiter holds a
   * database connection) before answering the retryable `command_in_progress`. Default 5000 ms.
   */
  commandLockWaitMs?: number = 5_000;
}

export const { ConfigurableModuleClass: ConfigurableOutboxModule, MODULE_OPTIONS_TOKEN: OUTBOX_MODULE_OPTIONS } =
  new ConfigurableModuleBuilder<OutboxModuleOptions>({ moduleName: 'ZmoduOutbox' })
    .setClassMethodName('forRoot')
    .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
    .build();

const COMMAND_NAME = /^[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)*$/;

/**
 * command.execute: an application command whose business write and outbox event commit together,
 * once per key (tenant, user, agent, run id), even when calls with one key arrive at once: the
 * command's transaction takes the key's lock before it looks the key up, so one handler body runs.
 */
@Injectable()
export class CommandSkill implements OnModuleInit {
  private readonly commands = new Map<string, CommandDefinition & { validate: ValidateFunction }>();
  private readonly options: OutboxModuleOptions;

  constructor(
    @Inject(OUTBOX_MODULE_OPTIONS) raw: OutboxModuleOptions,
    private readonly registry: SkillRegistry,
    @InjectOutboxStore() private readonly store: OutboxStore,
  ) {
    this.options = Object.assign(new OutboxModuleOptions(), raw);
    for (const c of this.options.commands ?? []) {
      if (!c || typeof c.name !== 'string' || !COMMAND_NAME.test(c.name))
        throw new Error(`OutboxModule: command name ${JSON.stringify(c?.name)} must be lower-case dotted words.`);
      if (typeof c.handler !== 'function') throw new Error(`OutboxModule: command '${c.name}' needs a handler.`);
      if (this.commands.has(c.name)) throw new Error(`OutboxModule: two commands are named '${c.name}'.`);
      const problem = schemaProblem(c.parameters ?? EMPTY_PARAMETERS);
      if (problem) throw new Error(`OutboxModule: command '${c.name}': ${problem}.`);
      this.commands.set(c.name, { ...c, validate: compileSchema(c.parameters ?? EMPTY_PARAMETERS) });
    }
  }

  onModuleInit(): void {
    if (this.commands.size === 0) return;
    const names = [...this.commands.keys()];
    this.registry.register({
      name: 'command.execute',
      action: 'execute',
      source: 'OutboxModule',
      requiredPermission: this.options.commandPermission ?? 'command:execute',
      description:
        `Execute an application command: ${[...this.commands.values()].map((c) => `${c.name}${c.description ? ` (${c.description})` : ''}`).join('; ')}. ` +
        'Its effect commits with an outbox event; the same run never executes a command twice (the same command and arguments again ' +
        'return the first event, replayed: true; another command or other arguments under the run id are refused). Returns the event id.',
      parameters: {
        type: 'object',
        properties: { command: { type: 'string', enum: names }, args: { type: 'object' } },
        required: ['command'],
        additionalProperties: false,
      },
      handler: (args, ctx) => this.execute(args.command as string, (args.args as Record<string, unknown>) ?? {}, ctx),
    });
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
      if (!(await this.store.lockKey(transaction, commandLockName(tenantId, key), this.options.commandLockWaitMs ?? 5_000)))
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
      if (!event || typeof event.topic !== 'string' || event.topic === '')
        throw new Error(`command '${name}' must return the event to publish: { topic, payload }`);
      const eventId = await this.store.enqueue(transaction, {
        tenantId,
        topic: event.topic,
        payload: event.payload,
        idempotencyKey: key,
        maxAttempts: this.options.maxAttempts ?? 5,
        command: { name, argsHash },
      });
      return { eventId, replayed: false };
    });
  }
}

/** Starts the relay after boot (unless autoStart is false) and stops it at shutdown. */
@Injectable()
class RelayLifecycle implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(
    private readonly relay: OutboxRelay,
    @Inject(OUTBOX_MODULE_OPTIONS) private readonly options: OutboxModuleOptions,
  ) {}

  onApplicationBootstrap(): void {
    for (const [topic, handler] of Object.entries(this.options.handlers ?? {})) this.relay.on(topic, handler);
    if (this.options.relay?.autoStart !== false) this.relay.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.relay.stop();
  }
}

function requireDataSource(ds?: DataSource): DataSource {
  if (!ds)
    throw new Error(
      'OutboxModule needs a TypeORM DataSource (with ZMODU_OUTBOX_MIGRATIONS), or a store of your own in its `store` option.',
    );
  return ds;
}

/**
 * The transactional outbox: command.execute (when commands are given), OutboxService, and an
 * OutboxRelay that delivers events to their handlers at least once, with retries, backoff,
 * dead-lettering and fencing; several app instances can relay at once. Storage goes through the
 * OUTBOX_STORE port (TypeOrmOutboxStore by default).
 */
@Module({
  providers: [
    {
      provide: OUTBOX_STORE,
      inject: [OUTBOX_MODULE_OPTIONS, { token: getDataSourceToken(), optional: true }],
      useFactory: (o: OutboxModuleOptions, ds?: DataSource): OutboxStore => o.store ?? new TypeOrmOutboxStore(requireDataSource(ds)),
    },
    {
      provide: OutboxService,
      inject: [OUTBOX_MODULE_OPTIONS, OUTBOX_STORE],
      useFactory: (o: OutboxModuleOptions, store: OutboxStore) => new OutboxService(store, o.maxAttempts ?? 5),
    },
    {
      provide: OutboxRelay,
      inject: [OUTBOX_MODULE_OPTIONS, OUTBOX_STORE],
      useFactory: (o: OutboxModuleOptions, store: OutboxStore) => new OutboxRelay(store, o.relay ?? {}),
    },
    CommandSkill,
    RelayLifecycle,
  ],
  exports: [OutboxService, OutboxRelay, OUTBOX_STORE],
})
export class OutboxModule extends ConfigurableOutboxModule {}
