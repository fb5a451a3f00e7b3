import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy, OnModuleInit, Optional } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, ModuleRef, Reflector } from '@nestjs/core';
import { SkillExplorer } from '@zmodu/skills/internal';
import { SkillRegistry } from '@zmodu/skills';
import {
  AGENT_CRON_NEEDS_SCHEDULE_MODULE_MESSAGE,
  DUPLICATE_AGENT_CRON_MESSAGE,
  DUPLICATE_STATIC_JOB_MESSAGE,
  JOB_AGENT_MESSAGE,
  JOBS_NEED_WORKER_MESSAGE,
} from '../agent.messages';
import { AgentRegistry } from '../agent.registry';
import { InvalidJobsOptionsException } from '../exceptions/invalid-jobs-options.exception';
import { AgentWorker } from '../worker/agent-worker';
import { AgentJobStore } from './agent-job.ports';
import { AGENT_JOB_METADATA, AgentJobDefinition, staticAgentJob } from './agent-job.decorator';
import { AGENT_CRON_METADATA, AgentCronDefinition, bindAgentCron } from './agent-cron.decorator';
import { AgentJobScheduler } from './agent-job-scheduler';
import { AgentJobTicks } from './agent-job-ticks';
import { loadCronPackage } from './cron-package';
import { CronJobRegistry, loadSchedulePackage, SchedulePackage } from './schedule-package';
import { AgentJobSkills } from './agent-job-skills';
import { AGENT_JOB_STORE } from './agent-job-store.provider';
import { AgentJobsOptions, ResolvedAgentJobsOptions } from './agent-jobs.options';
import { AGENT_JOBS_MODULE_OPTIONS } from './agent-jobs.module-definition';
import { resolveJobsOptions } from './resolve-jobs-options';

/**
 * Wires scheduled jobs to the module lifecycle when AgentModule has a `jobs` option. At construction it loads
 * `@nestjs/schedule` (a boot error names the package when it cannot). At module init it registers the four job skills
 * (so agents and MCP see them; every call goes through SkillDispatcher), finds the `@AgentJob` declarations on
 * providers' classes and methods and the `@AgentCron` methods (bound to AgentJobTicks), and looks up the application's
 * SchedulerRegistry (ScheduleModule.forRoot(); optional for jobs, required by @AgentCron). At bootstrap, once the
 * AgentWorker has started, it upserts the static jobs and starts the scheduler with the worker's `post` and the
 * registry. At module destroy, which comes before the worker's shutdown, it stops the scheduler (its jobs leave the
 * registry).
 */
@Injectable()
export class AgentJobsRunner implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('AgentJobs');
  private readonly options: ResolvedAgentJobsOptions;
  private readonly definitions = new Map<string, { definition: AgentJobDefinition; owner: string }>();
  private readonly crons = new Map<string, { definition: AgentCronDefinition; owner: string; instance: object }>();
  private readonly schedule: SchedulePackage;
  private registry: CronJobRegistry | null = null;
  private scheduler: AgentJobScheduler | null = null;
  private jobSkills: AgentJobSkills | null = null;

  constructor(
    @Inject(AGENT_JOBS_MODULE_OPTIONS) raw: AgentJobsOptions,
    @Inject(AGENT_JOB_STORE) private readonly store: AgentJobStore,
    // Optional only to say what is missing: AgentJobsModule posts to AgentWorkerModule's worker.
    @Optional() private readonly worker: AgentWorker,
    private readonly agents: AgentRegistry,
    private readonly skills: SkillRegistry,
    private readonly explorer: SkillExplorer,
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    private readonly moduleRef: ModuleRef,
    private readonly ticks: AgentJobTicks,
  ) {
    if (!worker) throw new InvalidJobsOptionsException('AgentJobsModule', JOBS_NEED_WORKER_MESSAGE);
    this.options = resolveJobsOptions(raw);
    this.schedule = loadSchedulePackage('AgentJobsModule');
    // The job timers and cron expressions need `cron` (an optional peer; @nestjs/schedule brings it): fail at boot.
    loadCronPackage('AgentJobsModule');
  }

  async onModuleInit(): Promise<void> {
    this.discover();
    this.initCrons();
    // The app's own @Skill methods first: a name one of them declares is reported as taken, whoever boots first.
    this.explorer.exploreAll();
    this.jobSkills = new AgentJobSkills(this.store, this.options);
    this.jobSkills.register(this.skills);
    // A job naming no agent, or an unknown one, would fail at every tick: refuse it at boot.
    this.options.schedulableTasks.forEach((task, i) => {
      const problem = this.agentProblem(task.agent);
      if (problem) throw new InvalidJobsOptionsException(`jobs.schedulableTasks[${i}].agent`, `task '${task.name}': ${problem}`);
    });
    for (const { definition, owner } of this.definitions.values()) {
      const problem = this.agentProblem(definition.agent);
      if (problem) throw new TypeError(`@AgentJob "${definition.name}" on ${owner}: ${problem}`);
    }
  }

  /** @AgentCron methods: refused without ScheduleModule, or naming an unknown agent; bound otherwise (AgentCronCheck refuses them without AgentJobsModule). */
  private initCrons(): void {
    const crons = [...this.crons.values()];
    const ticks = this.ticks;
    this.registry = this.findRegistry(this.schedule);
    if (crons.length && !this.registry) throw new TypeError(AGENT_CRON_NEEDS_SCHEDULE_MODULE_MESSAGE(crons.map((c) => c.owner)));
    for (const { definition, owner, instance } of crons) {
      const problem = this.agentProblem(definition.agent);
      if (problem) throw new TypeError(`@AgentCron "${definition.name}" on ${owner}: ${problem}`);
      bindAgentCron(instance, ticks);
    }
  }

  /** The application's SchedulerRegistry (ScheduleModule.forRoot() is global), or null when it imports no ScheduleModule. */
  private findRegistry(schedule: SchedulePackage): CronJobRegistry | null {
    try {
      return this.moduleRef.get(schedule.SchedulerRegistry, { strict: false });
    } catch {
      return null;
    }
  }

  private agentProblem(agent: string | undefined): string | null {
    const known = this.agents.list().map((a) => a.name);
    if (agent === undefined) return known.length === 1 ? null : JOB_AGENT_MESSAGE('(none)', known);
    return this.agents.has(agent) ? null : JOB_AGENT_MESSAGE(agent, known);
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.scheduler) return;
    await this.worker.onApplicationBootstrap();
    const declared = [...this.definitions.values()].map(({ definition }) => staticAgentJob(definition));
    for (const job of declared) await this.store.upsert(job);
    // The last boot wins: a static job this code no longer declares stops on every instance (a later boot of code that
    // declares it makes it active again). An instance that declares no @AgentJob at all (an API-only role of the same
    // application) retires nothing.
    if (declared.length) {
      const retired = await this.store.retireStatic(declared.map((j) => j.id));
      if (retired.length) this.logger.log(`retired ${retired.length} static job(s) no longer declared: ${retired.join(', ')}`);
    }
    await this.narrowStored();
    const scheduler = new AgentJobScheduler(this.store, this.worker, this.options.syncMs, this.registry);
    this.scheduler = scheduler;
    await scheduler.start();
    this.logger.log(`scheduler started: ${scheduler.jobIds().length} job(s), ${this.definitions.size} declared with @AgentJob`);
  }

  /**
   * Dynamic jobs keep no more than their task needs: each stored one is narrowed to the permissions its task declares now
   * (a job stored before tasks declared them, or before a declaration was narrowed, included; a job whose task is gone
   * keeps none), and one without an expiry gets `maxJobLifetimeMs` from now. Idempotent: a narrowed job is left alone.
   */
  private async narrowStored(): Promise<void> {
    const skills = this.jobSkills;
    if (!skills) return;
    const narrowed: string[] = [];
    for (const job of await this.store.active()) {
      const next = skills.narrowed(job);
      if (!next) continue;
      await this.store.upsert(next);
      narrowed.push(job.id);
    }
    if (narrowed.length)
      this.logger.log(`narrowed ${narrowed.length} scheduled job(s) to their task's permissions and lifetime: ${narrowed.join(', ')}`);
  }

  onModuleDestroy(): void {
    this.scheduler?.stop();
  }

  /** Read the job store now, as the periodic sync does every `syncMs` (jobs created or cancelled elsewhere). */
  async sync(): Promise<void> {
    await this.scheduler?.sync();
  }

  /** The ids of the jobs the scheduler runs on this instance (empty before bootstrap or without `jobs`). */
  jobIds(): string[] {
    return this.scheduler?.jobIds() ?? [];
  }

  private discover(): void {
    for (const wrapper of this.discovery.getProviders()) {
      const metatype = wrapper.metatype;
      if (typeof metatype !== 'function' || !wrapper.instance || typeof wrapper.instance !== 'object') continue;
      const name = wrapper.name ? String(wrapper.name) : metatype.name;
      this.add(this.reflector.get<AgentJobDefinition | undefined>(AGENT_JOB_METADATA, metatype), name);
      const prototype = Object.getPrototypeOf(wrapper.instance) as object | null;
      if (!prototype) continue;
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const fn = (prototype as Record<string, unknown>)[method];
        if (typeof fn !== 'function') continue;
        this.add(this.reflector.get<AgentJobDefinition | undefined>(AGENT_JOB_METADATA, fn), `${name}.${method}`);
        this.addCron(this.reflector.get<AgentCronDefinition | undefined>(AGENT_CRON_METADATA, fn), `${name}.${method}`, wrapper.instance);
      }
    }
  }

  private add(definition: AgentJobDefinition | undefined, owner: string): void {
    if (!definition) return;
    const seen = this.definitions.get(definition.name);
    if (seen) {
      // The same class provided twice (two tokens) declares one job, not a clash.
      if (seen.definition === definition) return;
      throw new TypeError(DUPLICATE_STATIC_JOB_MESSAGE(definition.name, [seen.owner, owner]));
    }
    this.definitions.set(definition.name, { definition, owner });
  }

  private addCron(definition: AgentCronDefinition | undefined, owner: string, instance: object): void {
    if (!definition) return;
    const seen = this.crons.get(definition.name);
    if (seen && seen.definition !== definition) throw new TypeError(DUPLICATE_AGENT_CRON_MESSAGE(definition.name, [seen.owner, owner]));
    // One class provided under two tokens: two instances, each fired by its own @Cron, each bound (their ticks are one).
    if (seen) bindAgentCron(instance, this.ticks);
    else this.crons.set(definition.name, { definition, owner, instance });
  }
}
