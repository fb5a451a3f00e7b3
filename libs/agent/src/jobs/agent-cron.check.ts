import { Injectable, OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, ModuleRef, Reflector } from '@nestjs/core';
import { AGENT_CRON_NEEDS_JOBS_MESSAGE, AGENT_JOB_NEEDS_JOBS_MESSAGE } from '../agent.messages';
import { AGENT_CRON_METADATA } from './agent-cron.decorator';
import { AGENT_JOB_METADATA } from './agent-job.decorator';
import { AGENT_JOBS_MODULE_OPTIONS } from './agent-jobs.module-definition';

/**
 * In AgentModule: an `@AgentCron` or `@AgentJob` in an application without AgentJobsModule would never fire. Refuse
 * the boot, naming the declaration and the module to import (AgentJobsModule's runner handles them when it is there).
 */
@Injectable()
export class AgentCronCheck implements OnModuleInit {
  constructor(
    private readonly moduleRef: ModuleRef,
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  onModuleInit(): void {
    if (this.hasJobsModule()) return;
    for (const wrapper of this.discovery.getProviders()) {
      const metatype = wrapper.metatype;
      if (typeof metatype !== 'function' || !wrapper.instance || typeof wrapper.instance !== 'object') continue;
      const name = wrapper.name ? String(wrapper.name) : metatype.name;
      if (this.reflector.get(AGENT_JOB_METADATA, metatype)) throw new TypeError(AGENT_JOB_NEEDS_JOBS_MESSAGE(name));
      const prototype = Object.getPrototypeOf(wrapper.instance) as object | null;
      if (!prototype) continue;
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const fn = (prototype as Record<string, unknown>)[method];
        if (typeof fn !== 'function') continue;
        if (this.reflector.get(AGENT_CRON_METADATA, fn)) throw new TypeError(AGENT_CRON_NEEDS_JOBS_MESSAGE(`${name}.${method}`));
        if (this.reflector.get(AGENT_JOB_METADATA, fn)) throw new TypeError(AGENT_JOB_NEEDS_JOBS_MESSAGE(`${name}.${method}`));
      }
    }
  }

  private hasJobsModule(): boolean {
    try {
      this.moduleRef.get(AGENT_JOBS_MODULE_OPTIONS, { strict: false });
      return true;
    } catch {
      return false;
    }
  }
}
