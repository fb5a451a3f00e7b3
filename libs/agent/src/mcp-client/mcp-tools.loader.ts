import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import type { Tool } from '@modelcontextprotocol/client';
import { ActionClass } from '@zmodu/guard';
import { JsonSchema, SkillRegistry } from '@zmodu/skills';
import { schemaProblem, SKILL_NAME_MAX_LENGTH, SkillExplorer } from '@zmodu/skills/internal';
import { AgentModuleOptions } from '../agent-module.options';
import { AGENT_MODULE_OPTIONS } from '../agent.module-definition';
import {
  MCP_ACTION_UNKNOWN_MESSAGE,
  MCP_SERVER_SKIPPED_MESSAGE,
  MCP_SERVER_UNUSED_MESSAGE,
  MCP_TOOL_MISSING_MESSAGE,
  MCP_TOOL_SKIPPED_MESSAGE,
  MCP_TOOLS_CAPPED_MESSAGE,
  MCP_TOOL_NAMES_TOO_LONG_MESSAGE,
  MCP_TOOLS_COLLIDE_MESSAGE,
  MCP_TOOLS_OVER_BUDGET_MESSAGE,
  shownToolName,
} from '../agent.messages';
import { AgentRegistry } from '../agent.registry';
import { McpServerUnavailableException } from '../exceptions/mcp-server-unavailable.exception';
import { McpConnectError } from '../exceptions/mcp-connect.error';
import { McpSkillNameTakenException } from '../exceptions/mcp-skill-name-taken.exception';
import { ListedTool, McpConnection } from './mcp-connection';
import { describeServer } from './mcp-describe';
import { MCP_TOOL_NAME_MAX_LENGTH, NormalizedMcpServer } from './mcp-server-options';
import { clientSdk } from './mcp-sdk';
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
    // At boot: mcpServers need the MCP client SDK, an optional peer; without it this fails naming the package.
    if (this.servers.length) clientSdk();
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
    const loaded: Array<{ connection: McpConnection; tools: ListedTool[] }> = [];
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

  private async open(server: NormalizedMcpServer): Promise<{ connection: McpConnection; tools: ListedTool[] }> {
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
   * Register the listed tools of one server. A tool that cannot be used (its name, its schema, its size, a collision)
   * is skipped with a warning, never a boot failure; a name another skill already has fails boot for a required server.
   */
  private register(connection: McpConnection, listed: ListedTool[], wanted: Set<string>): void {
    const server = connection.server;
    if (listed.length > server.maxTools) this.logger.warn(MCP_TOOLS_CAPPED_MESSAGE(server.name, listed.length, server.maxTools));
    const bySkill = new Map<string, ListedTool[]>();
    let badNames = 0;
    for (const entry of listed.slice(0, server.maxTools)) {
      // Refused before it is mapped: no skill name is that long, and the mapping would scan it.
      if (typeof entry.tool.name !== 'string' || entry.tool.name === '' || entry.tool.name.length > MCP_TOOL_NAME_MAX_LENGTH) {
        badNames++;
        continue;
      }
      const skill = `${server.name}.${mcpToolSegment(entry.tool.name)}`;
      const same = bySkill.get(skill);
      if (same) same.push(entry);
      else bySkill.set(skill, [entry]);
    }
    if (badNames) this.logger.warn(MCP_TOOL_NAMES_TOO_LONG_MESSAGE(server.name, badNames, MCP_TOOL_NAME_MAX_LENGTH));
    const fit: Array<{ skill: string; entry: ListedTool }> = [];
    for (const [skill, same] of bySkill) {
      if (!wanted.has(skill)) continue;
      if (same.length > 1) {
        this.logger.warn(
          MCP_TOOLS_COLLIDE_MESSAGE(
            server.name,
            skill,
            same.map((t) => t.tool.name),
          ),
        );
        continue;
      }
      const entry = same[0];
      const taken = this.skills.get(skill);
      if (taken) {
        if (server.required) throw new McpSkillNameTakenException(server.name, entry.tool.name, skill, taken.source);
        this.logger.warn(MCP_TOOL_SKIPPED_MESSAGE(server.name, entry.tool.name, skill, `${taken.source} already declares that name`));
        continue;
      }
      const problem = this.problemOf(server, skill, entry);
      if (problem) {
        this.logger.warn(MCP_TOOL_SKIPPED_MESSAGE(server.name, entry.tool.name, skill, problem));
        continue;
      }
      fit.push({ skill, entry });
    }
    const registered: string[] = [];
    for (const { skill, entry } of this.withinServerBudget(server, fit)) {
      const action = actionOf(server, entry.tool);
      try {
        this.registerTool(connection, skill, entry.tool, action);
      } catch (err) {
        // The registry's own checks: this tool only, never the boot.
        this.logger.warn(
          MCP_TOOL_SKIPPED_MESSAGE(
            server.name,
            entry.tool.name,
            skill,
            `it cannot be registered: ${(err as Error)?.message ?? String(err)}`,
          ),
        );
        continue;
      }
      registered.push(`${skill} (${action})`);
    }
    for (const name of wanted)
      if (name.startsWith(`${server.name}.`) && !bySkill.has(name))
        this.logger.warn(MCP_TOOL_MISSING_MESSAGE(server.name, name, [...bySkill.keys()]));
    const names = new Set(listed.map((t) => t.tool.name));
    for (const tool of server.actions.keys()) if (!names.has(tool)) this.logger.warn(MCP_ACTION_UNKNOWN_MESSAGE(server.name, tool));
    this.logger.log(
      `MCP server '${server.name}' (${describeServer(server)}, ${eraName(connection.era)}): ${listed.length} tools, registered ${registered.length ? registered.join(', ') : 'none'}.`,
    );
  }

  /**
   * The tools that fit in `maxToolBytesPerServer` together: taken in skill-name order (whatever order the server
   * lists them in), each kept while the sum of what is kept stays within the cap; the others are named in a warning.
   */
  private withinServerBudget(
    server: NormalizedMcpServer,
    fit: Array<{ skill: string; entry: ListedTool }>,
  ): Array<{ skill: string; entry: ListedTool }> {
    const kept: Array<{ skill: string; entry: ListedTool }> = [];
    const left: string[] = [];
    let used = 0;
    for (const item of [...fit].sort((a, b) => (a.skill < b.skill ? -1 : a.skill > b.skill ? 1 : 0))) {
      const bytes = (item.entry.schemaBytes ?? 0) + Buffer.byteLength(descriptionOf(server, item.entry.tool));
      if (used + bytes > server.maxToolBytesPerServer) {
        left.push(item.skill);
        continue;
      }
      used += bytes;
      kept.push(item);
    }
    if (left.length)
      this.logger.warn(
        MCP_TOOLS_OVER_BUDGET_MESSAGE(
          server.name,
          server.maxToolBytesPerServer,
          kept.map((k) => k.skill),
          left,
        ),
      );
    return kept;
  }

  private registerTool(connection: McpConnection, skill: string, tool: Tool, action: ActionClass): void {
    const server = connection.server;
    this.skills.register({
      name: skill,
      action,
      description: descriptionOf(server, tool),
      parameters: tool.inputSchema as JsonSchema,
      timeoutMs: server.timeoutMs,
      tenantScoped: server.tenantScoped,
      ...(server.requiredPermission !== undefined ? { requiredPermission: server.requiredPermission } : {}),
      handler: mcpToolHandler(connection, tool),
      source: `MCP server '${server.name}' (${describeServer(server)}), tool '${shownToolName(tool.name)}'`,
    });
  }

  /** Why a tool cannot be a skill, or null. Never throws: a schema that breaks the check is a problem too. */
  private problemOf(server: NormalizedMcpServer, skill: string, { tool, schemaBytes, descriptionLength }: ListedTool): string | null {
    if (skill.length > SKILL_NAME_MAX_LENGTH) return `the name is longer than ${SKILL_NAME_MAX_LENGTH} characters`;
    if (tool.execution?.taskSupport === 'required')
      return 'it runs only as a task (execution.taskSupport: required), which this client does not use';
    if (descriptionLength > server.maxDescriptionLength)
      return `its description is ${descriptionLength} characters, more than maxDescriptionLength (${server.maxDescriptionLength})`;
    // Measured before it is compiled: a schema of megabytes is not even looked at.
    if (schemaBytes === null) return 'its inputSchema cannot be measured (not JSON, or nested too deep)';
    if (schemaBytes > server.maxSchemaBytes)
      return `its inputSchema is ${schemaBytes} bytes of JSON, more than maxSchemaBytes (${server.maxSchemaBytes}); it would be sent to the model with every request`;
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

/** The protocol era a connection landed on, as the boot log names it. */
function eraName(era: string | undefined): string {
  return era === 'modern' ? 'MCP 2026-07-28, stateless' : 'MCP 2025 era, initialize';
}

/** The description the model reads: the tool's, else its title, else one naming it. */
function descriptionOf(server: NormalizedMcpServer, tool: Tool): string {
  return tool.description?.trim() || tool.title?.trim() || `The tool '${shownToolName(tool.name)}' of the MCP server '${server.name}'.`;
}

/**
 * The class the application gives the tool (`actions`), else `read` when the server marks it read-only and the entry
 * trusts that hint (trustReadOnlyHint, default false), else `execute`. A tool also marked `destructiveHint: true` is
 * `execute`: of two contradictory hints, the safer class. No hint ever makes a tool `propose`.
 */
function actionOf(server: NormalizedMcpServer, tool: Tool): ActionClass {
  const mapped = server.actions.get(tool.name);
  if (mapped) return mapped;
  const hints = tool.annotations;
  return server.trustReadOnlyHint && hints?.readOnlyHint === true && hints.destructiveHint !== true ? 'read' : 'execute';
}
