import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { INestApplicationContext, Type } from '@nestjs/common';
import type { GuardPolicy, PolicyHealth } from '@zmodu/guard';
import type * as GuardPackage from '@zmodu/guard';
import type * as SkillsPackage from '@zmodu/skills';
import type { SkillCallResult, SkillDispatcher, SkillRegistry } from '@zmodu/skills';
import type { CallRequest } from './cli-runtime';
import { UsageError } from './cli-config';

/** The application's AgentRegistry as the CLI reads it (the class comes from the app's own @zmodu/agent). */
interface AppAgents {
  list(): { name: string; spec: { guard: GuardPolicy }; auditPolicy(): PolicyHealth }[];
}

/** `--app file#Export`: the module file (resolved from the working directory) and the module class it exports. */
export function parseAppSpec(spec: string): { file: string; exportName: string } {
  const hash = spec.lastIndexOf('#');
  const file = hash > 0 ? spec.slice(0, hash) : spec;
  const exportName = hash > 0 ? spec.slice(hash + 1) : 'AppModule';
  if (!file || !/^[A-Za-z_$][\w$]*$/.test(exportName))
    throw new UsageError(`--app takes FILE#ExportedModule, e.g. dist/app.module.js#AppModule (got ${JSON.stringify(spec)})`);
  return { file: resolve(process.cwd(), file), exportName };
}

/** The module file, required (CommonJS, or ESM without top-level await) or imported (ESM). */
async function loadModuleFile(file: string): Promise<Record<string, unknown>> {
  try {
    return createRequire(file)(file) as Record<string, unknown>;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ERR_REQUIRE_ESM' && code !== 'ERR_REQUIRE_ASYNC_MODULE') throw err;
    return (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  }
}

/**
 * The skills of the application itself: its module booted as a Nest application context (no HTTP server), and its
 * own registry, dispatcher and guard (every @Skill of its providers, the data skills it configured, the MCP tools of its
 * agents). A call runs under the policy of one of its agents (`--agent`, or its only one), as that agent's runs would.
 * The @zmodu packages are the application's own copies (resolved from its module file), so that their classes are the
 * ones its module registered.
 */
export class AppRuntime {
  private constructor(
    private readonly app: INestApplicationContext,
    private readonly skills: typeof SkillsPackage,
    private readonly guards: typeof GuardPackage,
    private readonly agents: AppAgents | null,
    readonly source: string,
  ) {}

  static async start(spec: string): Promise<AppRuntime> {
    const { file, exportName } = parseAppSpec(spec);
    if (!existsSync(file)) throw new UsageError(`--app: no file ${file} (give the compiled module, e.g. dist/app.module.js#AppModule)`);
    const fromApp = createRequire(file);
    let skills: typeof SkillsPackage;
    let guards: typeof GuardPackage;
    let nest: typeof import('@nestjs/core');
    try {
      skills = fromApp('@zmodu/skills') as typeof SkillsPackage;
      guards = fromApp('@zmodu/guard') as typeof GuardPackage;
      nest = fromApp('@nestjs/core') as typeof import('@nestjs/core');
    } catch (err) {
      throw new UsageError(
        `--app: ${file} does not resolve @zmodu/skills, @zmodu/guard and @nestjs/core: is it a zmodu application? (${(err as Error).message})`,
      );
    }
    const exports = await loadModuleFile(file);
    const module = Object.hasOwn(exports, exportName) ? exports[exportName] : undefined;
    if (typeof module !== 'function') {
      const classes = Object.keys(exports).filter((k) => typeof exports[k] === 'function');
      throw new UsageError(`--app: ${file} exports no module '${exportName}' (its exported classes: ${classes.join(', ') || 'none'})`);
    }
    const app = await nest.NestFactory.createApplicationContext(module as Type, { logger: false, abortOnError: false });
    let agents: AppAgents | null = null;
    try {
      const agentPackage = fromApp('@zmodu/agent') as { AgentRegistry: Type };
      agents = app.get<AppAgents>(agentPackage.AgentRegistry, { strict: false });
    } catch {
      agents = null; // an application without @zmodu/agent, or without AgentModule: calls need --agent's policy
    }
    return new AppRuntime(app, skills, guards, agents, `the application ${file}#${exportName}`);
  }

  get registry(): SkillRegistry {
    return this.app.get(this.skills.SkillRegistry, { strict: false });
  }

  get dispatcher(): SkillDispatcher {
    return this.app.get(this.skills.SkillDispatcher, { strict: false });
  }

  /** The agent whose policy the calls run under: `name`, or the application's only agent. */
  agent(name: string | undefined): { name: string; policy: GuardPolicy } {
    const list = this.agents?.list() ?? [];
    if (!list.length)
      throw new UsageError('--app: the application defines no agent (AgentModule.forRoot({ agents })): no policy to call under');
    const agent = name === undefined ? (list.length === 1 ? list[0] : undefined) : list.find((a) => a.name === name);
    if (!agent)
      throw new UsageError(
        `${name === undefined ? 'name the agent whose policy the calls run under: --agent NAME' : `no agent '${name}' in the application`} (agents: ${list.map((a) => a.name).join(', ')})`,
      );
    return { name: agent.name, policy: agent.spec.guard };
  }

  /** Each agent's policy health, by name. */
  policies(): Record<string, PolicyHealth> {
    return Object.fromEntries((this.agents?.list() ?? []).map((a) => [a.name, a.auditPolicy()]));
  }

  toSkillsJson(): unknown {
    return this.skills.toSkillsJson(this.registry);
  }

  toOpenApi(options: { title?: string; version?: string; basePath?: string }): unknown {
    return this.skills.toOpenApi(this.registry, options);
  }

  /** One call through the application's dispatcher, under the agent's policy, as that agent's run would make it. */
  async call(req: CallRequest, agentName: string | undefined): Promise<SkillCallResult> {
    const agent = this.agent(agentName);
    const ctx = this.skills.createSkillContext({
      guard: new this.guards.Guard(agent.policy),
      tenantId: req.tenant ?? undefined,
      userId: req.user ?? undefined,
      permissions: req.permissions ?? [],
      runId: `cli-${randomUUID()}`,
      agent: agent.name,
    });
    return this.dispatcher.dispatch(ctx, req.skill, req.args);
  }

  async close(): Promise<void> {
    await this.app.close();
  }
}
