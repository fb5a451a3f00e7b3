import { InvalidSkillDefinitionException } from './exceptions/invalid-skill-definition.exception';
import { REQUEST_SCOPED_SKILL_PROBLEM } from './skill.messages';
import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper';
import { SkillMetadata } from './skill.decorator';
import { SkillRegistry } from './skill.registry';
import { SkillHandler } from './skill-definition';

/** Finds `@Skill` methods on providers at boot and registers them. */
@Injectable()
export class SkillExplorer implements OnModuleInit {
  private readonly logger = new Logger('SkillExplorer');
  private explored = false;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly registry: SkillRegistry,
  ) {}

  onModuleInit(): void {
    this.exploreAll();
  }

  /**
   * Register the `@Skill` methods of every provider, once: a later call does nothing. A module that registers
   * skills of its own at boot (the MCP client) calls it first, since its onModuleInit may run before this one:
   * then a name a provider declares is already taken when it looks.
   */
  exploreAll(): void {
    if (this.explored) return;
    this.explored = true;
    for (const wrapper of this.discovery.getProviders()) this.explore(wrapper);
  }

  private explore(wrapper: InstanceWrapper): void {
    const instance = wrapper.instance as Record<string, unknown> | undefined;
    if (!instance || typeof instance !== 'object') return;
    const prototype = Object.getPrototypeOf(instance) as object | null;
    if (!prototype) return;
    for (const method of this.scanner.getAllMethodNames(prototype)) {
      const options = this.discovery.getMetadataByDecorator(SkillMetadata, wrapper, method);
      if (!options) continue;
      const owner = `${wrapper.metatype?.name ?? wrapper.name ?? 'provider'}.${method}`;
      if (!wrapper.isDependencyTreeStatic()) {
        throw new InvalidSkillDefinitionException(options.name, `on ${owner}: ${REQUEST_SCOPED_SKILL_PROBLEM(owner)}`);
      }
      const fn = instance[method] as (...a: unknown[]) => unknown;
      const handler: SkillHandler = (args, ctx) => fn.call(instance, args, ctx);
      // As declared: a Standard Schema is registered as itself (the registry derives its JSON Schema again).
      const { standard, ...declared } = options;
      this.registry.register({ ...declared, parameters: standard ?? declared.parameters, handler, source: owner });
      this.logger.debug(`skill ${options.name} (${options.action}) -> ${owner}`);
    }
  }
}
