import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { ActionClass } from '@zmodu/guard';
import { JsonSchema, schemaProblem, SKILL_NAME_MAX_LENGTH, SkillExplorer, SkillRegistry } from '@zmodu/skills';
import { AgentModuleOptions } from '../agent-module.options';
import { AGENT_MODULE_OPTIONS } from '../agent.module-definition';
import {
  MCP_SERVER_SKIPPED_MESSAGE,
  MCP_SERVER_UNUSED_MESSAGE,
  MCP_TOOL_MISSING_MESSAGE,
  MCP_TOOL_SKIPPED_MESSAGE,
  MCP_TOOLS_CAPPED_MESSAGE,
  MCP_TOOLS_COLLIDE_MESSAGE,
  shownToolName,
} from '../agent.messages';
import { AgentRegistry } from '../agent.registry';
import { McpServerUnavailableException } from '../exceptions/mcp-server-unavailable.exception';
import { McpConnectError } from '../exceptions/mcp-connect.error';
import { McpSkillNameTakenException } from '../exceptions/mcp-skill-name-taken.exception';
import { McpConnection } from './mcp-connection';
import { describeServer } from './mcp-describe';
import { NormalizedMcpServer } from './mcp-server-options';
import { mcpToolHandler } from './mcp-tool-call';
import { mcpToolSegment } from './mcp-tool-name';
import { validateMcpServers } from './validate-mcp-server-options';

/**
 * The client side of MCP: at boot (onModuleInit, so before the agents' policy audit at bootstrap) it connects to
 * each external server that some agent names a tool of, lists its tools and registers, through
 * `SkillRegistry.register`, those that an agent's `guard.allow` or `skills` array names, as `<server>.<tool>`
 * skills. Calls reach them only through `SkillDispatcher.dispatch`. The clients close on module destroy.
 */
@Injectable()
export class McpToolsLoader implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('McpTools');
  private readonly servers: NormalizedMcpServer[];
  private readonly connections: McpConnection[] = [];

  constructor(
    @Inject(AGENT_MODULE_OPTIONS) options: AgentModuleOptions,
    private readonly agents: AgentRegistry,
    private readonly skills: SkillRegistry,
    private readonly explorer: SkillExplorer,
  ) {
    this.servers = validateMcpServers(Object.hasOwn(options ?? {}, 'mcpServers') ? options.mcpServers : undefined);
  }

  async onModuleInit(): Promise<void> {
    if (this.servers.length === 0) return;
    const wanted = this.listedNames();
    const used = this.servers.filter((server) => {
      const listed = [...wanted].some((name) => name.startsWith(`${server.name}.`));
      if (!listed) this.logger.warn(MCP_SERVER_UNUSED_MESSAGE(server.name));
      return listed;
    });
    const opened = await Promise.allSettled(used.map((server) => this.open(server)));
    const failures: string[] = [];
    const loaded: Array<{ connection: McpConnection; tools: Tool[] }> = [];
    opened.forEach((outcome, i) => {
      if (outcome.status === 'fulfilled') return loaded.push(outcome.value);
      const message = outcome.reason instanceof McpConnectError ? outcome.reason.message : String(outcome.reason);
      if (used[i].required) failures.push(message);
      else this.logger.warn(MCP_SERVER_SKIPPED_MESSAGE(message));
    });
    try {
      if (failures.length) throw new McpServerUnavailableException(failures);
      // The app's own @Skill methods first: a tool never takes a name one of them declares.
      if (loaded.length) this.explorer.exploreAll();
      for (const { connection, tools } of loaded) this.register(connection, tools, wanted);
    } catch (err) {
      // A boot that fails leaves no child process or session behind.
      await this.onModuleDestroy();
      throw err;
    }
  }

  async onModuleDestroy(): Promise<void> {
    const open = this.connections.splice(0);
    await Promise.allSettled(open.map((c) => c.close()));
  }

  private async open(server: NormalizedMcpServer): Promise<{ connection: McpConnection; tools: Tool[] }> {
    const connection = await McpConnection.open(server, this.logger);
    this.connections.push(connection);
    try {
      return { connection, tools: await connection.listTools() };
    } catch (err) {
      this.connections.splice(this.connections.indexOf(connection), 1);
      await connection.close();
      throw err;
    }
  }

  /** The names the agents list: every `guard.allow` entry and every name of a `skills` array (a filter lists none). */
  private listedNames(): Set<string> {
    const names = new Set<string>();
    for (const agent of this.agents.list()) {
      for (const name of agent.spec.guard.allow) names.add(name);
      if (Array.isArray(agent.spec.skills)) for (const name of agent.spec.skills as readonly string[]) names.add(name);
    }
    return names;
  }

  /**
   * Register the listed tools of one server. A tool that cannot be used (its name, its schema, a collision) is
   * skipped with a warning, never a boot failure; a name another skill already has fails boot for a required server.
   */
  private register(connection: McpConnection, listed: Tool[], wanted: Set<string>): void {
    const server = connection.server;
    if (listed.length > server.maxTools) this.logger.warn(MCP_TOOLS_CAPPED_MESSAGE(server.name, listed.length, server.maxTools));
    const tools = listed.slice(0, server.maxTools);
    const bySkill = new Map<string, Tool[]>();
    for (const tool of tools) {
      const skill = `${server.name}.${mcpToolSegment(tool.name)}`;
      const same = bySkill.get(skill);
      if (same) same.push(tool);
      else bySkill.set(skill, [tool]);
    }
    const registered: string[] = [];
    for (const [skill, same] of bySkill) {
      if (!wanted.has(skill)) continue;
      if (same.length > 1) {
        this.logger.warn(
          MCP_TOOLS_COLLIDE_MESSAGE(
            server.name,
            skill,
            same.map((t) => t.name),
          ),
        );
        continue;
      }
      const tool = same[0];
      const taken = this.skills.get(skill);
      if (taken) {
        if (server.required) throw new McpSkillNameTakenException(server.name, tool.name, skill, taken.source);
        this.logger.warn(MCP_TOOL_SKIPPED_MESSAGE(server.name, tool.name, skill, `${taken.source} already declares that name`));
        continue;
      }
      const problem = this.problemOf(skill, tool);
      if (problem) {
        this.logger.warn(MCP_TOOL_SKIPPED_MESSAGE(server.name, tool.name, skill, problem));
        continue;
      }
      const action = actionOf(server, tool);
      try {
        this.registerTool(connection, skill, tool, action);
      } catch (err) {
        // The registry's own checks (a description too long, ...): this tool only, never the boot.
        this.logger.warn(
          MCP_TOOL_SKIPPED_MESSAGE(server.name, tool.name, skill, `it cannot be registered: ${(err as Error)?.message ?? String(err)}`),
        );
        continue;
      }
      registered.push(`${skill} (${action})`);
    }
    for (const name of wanted)
      if (name.startsWith(`${server.name}.`) && !bySkill.has(name))
        this.logger.warn(MCP_TOOL_MISSING_MESSAGE(server.name, name, [...bySkill.keys()]));
    this.logger.log(
      `MCP server '${server.name}' (${describeServer(server)}): ${listed.length} tools, registered ${registered.length ? registered.join(', ') : 'none'}.`,
    );
  }

  private registerTool(connection: McpConnection, skill: string, tool: Tool, action: ActionClass): void {
    const server = connection.server;
    this.skills.register({
      name: skill,
      action,
      description: tool.description?.trim() || tool.title?.trim() || `The tool '${tool.name}' of the MCP server '${server.name}'.`,
      parameters: tool.inputSchema as JsonSchema,
      timeoutMs: server.timeoutMs,
      tenantScoped: server.tenantScoped,
      ...(server.requiredPermission !== undefined ? { requiredPermission: server.requiredPermission } : {}),
      handler: mcpToolHandler(connection.client, server, tool.name),
      source: `MCP server '${server.name}' (${describeServer(server)}), tool '${shownToolName(tool.name)}'`,
    });
  }

  /** Why a tool cannot be a skill, or null. Never throws: a schema that breaks the check is a problem too. */
  private problemOf(skill: string, tool: Tool): string | null {
    if (skill.length > SKILL_NAME_MAX_LENGTH) return `the name is longer than ${SKILL_NAME_MAX_LENGTH} characters`;
    if (tool.execution?.taskSupport === 'required')
      return 'it runs only as a task (execution.taskSupport: required), which this client does not use';
    try {
      return (
        schemaProblem(tool.inputSchema)
          ?.replace(/^parameters nest /, 'parameters nests ')
          .replace(/^parameters/, 'its inputSchema') ?? null
      );
    } catch (err) {
      return `its inputSchema cannot be checked: ${(err as Error)?.message ?? String(err)}`;
    }
  }
}

/**
 * `read` when the server marks the tool read-only and the entry trusts that hint (trustReadOnlyHint, default true);
 * else `execute`. A tool also marked `destructiveHint: true` is `execute`: of two contradictory hints, the safer class.
 */
function actionOf(server: NormalizedMcpServer, tool: Tool): ActionClass {
  const hints = tool.annotations;
  return server.trustReadOnlyHint && hints?.readOnlyHint === true && hints.destructiveHint !== true ? 'read' : 'execute';
}
