import { ConfigurableModuleBuilder, Inject, Injectable, Module, OnApplicationBootstrap, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import { ValidateFunction } from 'ajv';
import { DataSource } from 'typeorm';
import { SkillError } from '../exceptions/skill.error';
import { compileSchema, describeErrors, EMPTY_PARAMETERS, schemaProblem } from '../json-schema';
import { SkillInvocation } from '../skill-context';
import { SkillRegistry } from '../skill.registry';
import { OutboxRelay, RelayOptions } from './outbox-relay';
import { OutboxService } from './outbox.service';
import { CommandDefinition, OutboxHandler } from './outbox.types';

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
}

export const {
  ConfigurableModuleClass: ConfigurableOutboxModule,
  MODULE_OPTIONS_TOKEN: OUTBOX_MODULE_OPTIONS,
} = new ConfigurableModuleBuilder<OutboxModuleOptions>({ moduleName: 'ZmoduOutbox' })
  .setClassMethodName('forRoot')
  .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();

const COMMAND_NAME = /^[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)*$/;

/** command.execute: an application command whose business write and outbox event commit together, once per run id. */
@Injectable()
export class CommandSkill implements OnModuleInit {
  private readonly commands = new Map<string, CommandDefinition & { validate: ValidateFunction }>();
  private readonly options: OutboxModuleOptions;

  constructor(
    @Inject(OUTBOX_MODULE_OPTIONS) raw: OutboxModuleOptions,
    private readonly registry: SkillRegistry,
    private readonly outbox: OutboxService,
    @Inject(getDataSourceToken()) private readonly dataSource: DataSource,
  ) {
    this.options = Object.assign(new OutboxModuleOptions(), raw);
    for (const c of this.options.commands ?? []) {
      if (!c || typeof c.name !== 'string' || !COMMAND_NAME.test(c.name)) throw new Error(`OutboxModule: command name ${JSON.stringify(c?.name)} must be lower-case dotted words.`);
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
        'Its effect commits with an outbox event; the same run never executes a command twice. Returns the event id.',
      parameters: {
        type: 'object',
        properties: { command: { type: 'string', enum: names }, args: { type: 'object' } },
        required: ['command'],
        additionalProperties: false,
      },
      handler: (args, ctx) => this.execute(args.command as string, (args.args as Record<string, unknown>) ?? {}, ctx),
    });
  }

  async execute(name: string, args: Record<string, unknown>, ctx: SkillInvocation) {
    const key = ctx.runId;
    if (!key) throw new SkillError('run_id_required', 'command.execute needs a run id: it is the idempotency key.');
    const command = this.commands.get(name);
    if (!command) throw new SkillError('unknown_command', `No command '${name}'.`);
    if (!command.validate(args))
      throw new SkillError('invalid_arguments', `The arguments of ${name} do not match its parameters.`, { problems: describeErrors(command.validate.errors) }, 'InvalidArguments');
    const tenantId = ctx.tenantId ?? null;
    const prior = await this.outbox.findByKey(tenantId, key);
    if (prior) return { eventId: prior.id, replayed: true };
    try {
      const eventId = await this.dataSource.transaction(async (manager) => {
        const event = await command.handler(args, { manager, invocation: ctx });
        if (!event || typeof event.topic !== 'string') throw new Error(`command '${name}' must return the event to publish: { topic, payload }`);
        return this.outbox.enqueue(manager, { tenantId, topic: event.topic, payload: event.payload, idempotencyKey: key, maxAttempts: this.options.maxAttempts });
      });
      return { eventId, replayed: false };
    } catch (err) {
      // Two calls with one key at the same moment: the unique key refuses the second; answer with the first.
      if ((err as { driverError?: { code?: string } }).driverError?.code === '23505') {
        const first = await this.outbox.findByKey(tenantId, key);
        if (first) return { eventId: first.id, replayed: true };
      }
      throw err;
    }
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
  if (!ds) throw new Error('OutboxModule needs a TypeORM DataSource (with ZMODU_OUTBOX_MIGRATIONS).');
  return ds;
}

/**
 * The transactional outbox: command.execute (when commands are given), OutboxService, and an
 * OutboxRelay that delivers events to their handlers at least once, with retries, backoff,
 * dead-lettering and fencing; several app instances can relay at once.
 */
@Module({
  providers: [
    {
      provide: OutboxService,
      inject: [OUTBOX_MODULE_OPTIONS, { token: getDataSourceToken(), optional: true }],
      useFactory: (o: OutboxModuleOptions, ds?: DataSource) => new OutboxService(requireDataSource(ds), o.maxAttempts ?? 5),
    },
    {
      provide: OutboxRelay,
      inject: [OUTBOX_MODULE_OPTIONS, { token: getDataSourceToken(), optional: true }],
      useFactory: (o: OutboxModuleOptions, ds?: DataSource) => new OutboxRelay(requireDataSource(ds), o.relay ?? {}),
    },
    CommandSkill,
    RelayLifecycle,
  ],
  exports: [OutboxService, OutboxRelay],
})
export class OutboxModule extends ConfigurableOutboxModule {}

