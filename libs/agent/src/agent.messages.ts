export const INVALID_AGENT_SPEC_MESSAGE = (name: unknown, problem: string) =>
  `Invalid agent spec${typeof name === 'string' && name ? ` '${name}'` : ''}: ${problem}.`;

export const MOVED_OPTION_MESSAGE = (key: string, moved: string) =>
  `AgentModule has no '${key}' option: the worker and the jobs are modules of their own. Import ${moved} next to AgentModule (both from @zmodu/agent)`;

export const MISSING_GUARD_MESSAGE =
  "has no guard policy. Every agent needs one: add guard: { allow: ['market.quote', 'order.draft'], allowExecute: false } to its AgentSpec";

export const UNKNOWN_AGENT_MESSAGE = (name: string, known: string[]) =>
  `No agent named '${name}'. Agents: ${known.length ? known.join(', ') : '(none: pass agents to AgentModule.forRoot)'}.`;

export const DUPLICATE_AGENT_MESSAGE = (name: string) => `Two agents are named '${name}'; agent names must be unique.`;

export const POLICY_WARNING_MESSAGE = (agent: string, details: string) =>
  `Agent '${agent}' policy needs attention: ${details}. Set strictPolicies: true to make this a boot error.`;

export const INVALID_MCP_SERVER_MESSAGE = (index: number, name: unknown, problem: string) =>
  `Invalid mcpServers[${index}]${typeof name === 'string' && name ? ` ('${name}')` : ''}: ${problem}. An entry is { name, command, args?, env?, cwd? } or { name, url, headers? }.`;

export const MCP_SERVER_UNAVAILABLE_MESSAGE = (failures: readonly string[]) =>
  `${failures.join('; ')}. Fix the server entry (or start the server), or set required: false on it to boot without its tools.`;

export const MCP_SERVER_FAILED_MESSAGE = (server: string, where: string, phase: string, cause: string) =>
  `MCP server '${server}' (${where}) ${phase}: ${cause}`;

export const MCP_SERVER_SKIPPED_MESSAGE = (failure: string) =>
  `${failure}. It is not required (required: false): booting without its tools.`;

/**
 * A tool name as an MCP server sent it, made safe for a log line: control and line-separator characters escaped
 * (a name must not write log lines of its own), at most 128 characters.
 */
export const shownToolName = (name: string): string => {
  const safe = String(name).replace(
    // eslint-disable-next-line no-control-regex
    /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return safe.length > 128 ? `${safe.slice(0, 128)}...` : safe;
};

export const MCP_TOOL_SKIPPED_MESSAGE = (server: string, tool: string, skill: string, problem: string) =>
  `MCP server '${server}': tool '${shownToolName(tool)}' is not registered as '${skill}': ${problem}.`;

/** At most this many tool names are quoted in one message; the rest are counted. */
const MAX_NAMES_SHOWN = 5;

export const MCP_TOOLS_COLLIDE_MESSAGE = (server: string, skill: string, tools: readonly string[]) =>
  `MCP server '${server}': tools ${tools
    .slice(0, MAX_NAMES_SHOWN)
    .map((t) => `'${shownToolName(t)}'`)
    .join(
      ' and ',
    )}${tools.length > MAX_NAMES_SHOWN ? ` and ${tools.length - MAX_NAMES_SHOWN} more` : ''} ${tools.length === 2 ? 'both' : 'all'} map to the skill name '${skill}': ${tools.length === 2 ? 'neither' : 'none'} is registered. Rename ${tools.length === 2 ? 'one' : 'them'} on the server.`;

export const MCP_TOOLS_CAPPED_MESSAGE = (server: string, listed: number, maxTools: number) =>
  `MCP server '${server}' lists ${listed} tools, more than maxTools (${maxTools}): only the first ${maxTools} are considered, the rest are ignored. Raise maxTools on the entry if the server really has that many.`;

export const MCP_TOOL_NAMES_TOO_LONG_MESSAGE = (server: string, count: number, max: number) =>
  `MCP server '${server}': ${count} tool${count === 1 ? '' : 's'} with a name that is empty, not a string or longer than ${max} characters ${count === 1 ? 'is' : 'are'} ignored (no skill name can be made of ${count === 1 ? 'it' : 'them'}).`;

export const MCP_TOOLS_OVER_BUDGET_MESSAGE = (server: string, max: number, kept: readonly string[], left: readonly string[]) =>
  `MCP server '${server}': the tools agents list take more than maxToolBytesPerServer (${max} bytes of schema and description, sent to the model with every request): registered, in skill-name order, those that fit (${kept.length ? kept.slice(0, MAX_NAMES_SHOWN).join(', ') + (kept.length > MAX_NAMES_SHOWN ? ` and ${kept.length - MAX_NAMES_SHOWN} more` : '') : 'none'}); not registered: ${left.slice(0, MAX_NAMES_SHOWN).join(', ')}${left.length > MAX_NAMES_SHOWN ? ` and ${left.length - MAX_NAMES_SHOWN} more` : ''}. List fewer of its tools, or raise maxToolBytesPerServer on the entry.`;

export const MCP_ACTION_UNKNOWN_MESSAGE = (server: string, tool: string) =>
  `MCP server '${server}': actions names the tool '${shownToolName(tool)}', which the server does not list (a tool name as the server lists it, e.g. 'get-weather').`;

export const MCP_SKILL_TAKEN_MESSAGE = (server: string, tool: string, skill: string, source: string) =>
  `MCP server '${server}': tool '${shownToolName(tool)}' maps to the skill name '${skill}', which ${source} already declares. Rename the server entry (its name is the first segment) or the skill; or set required: false on the entry to boot without that tool.`;

export const MCP_TOOL_MISSING_MESSAGE = (server: string, skill: string, known: readonly string[]) =>
  `MCP server '${server}' has no tool for '${skill}', which an agent lists. Its tools map to: ${known.length ? known.join(', ') : '(none)'}.`;

export const MCP_CONNECTION_LOST_MESSAGE = (server: string, delayMs: number) =>
  `MCP server '${server}' closed the connection: its tools fail at once (mcp_unavailable) until it is reopened; next attempt in ${delayMs} ms.`;

export const MCP_RECONNECT_FAILED_MESSAGE = (server: string, attempt: number, cause: string, delayMs: number) =>
  `MCP server '${server}': reopening the connection failed (attempt ${attempt}): ${cause}; next attempt in ${delayMs} ms.`;

export const MCP_ANSWERS_DROPPED_MESSAGE = (server: string, most: number, maxBytes: number) =>
  `MCP server '${server}' sends requests faster than it reads our answers (more than ${most} or ${maxBytes} bytes of them waiting): answers past that are dropped, its requests unanswered; its tools work as before.`;

export const MCP_RECONNECTED_MESSAGE = (server: string, attempts: number) =>
  `MCP server '${server}': connection reopened (after ${attempts} attempt${attempts === 1 ? '' : 's'}); its tools answer again.`;

export const MCP_SERVER_UNUSED_MESSAGE = (server: string) =>
  `MCP server '${server}': no agent lists a '${server}.<tool>' name in guard.allow or in a skills array, so it is not connected.`;

export const OUT_OF_ATTEMPTS_MESSAGE = 'Gave up: no attempts left (maxAttempts).';
export const LEASE_EXPIRED_MESSAGE = 'Interrupted: its lease expired (the instance running it stopped or stalled).';
export const SHUTDOWN_INTERRUPTED_MESSAGE = (graceMs: number) =>
  `Interrupted: the application shut down and the run did not finish within shutdownGraceMs (${graceMs} ms); it is retried at the next start.`;
export const LEASE_LOST_MESSAGE = 'Stopped: this instance lost the run lease (another instance may have taken it over).';
export const MAILBOX_FULL_MESSAGE = (size: number, retryAfterSeconds: number) =>
  `The agent worker's mailbox is full (${size} goals waiting). Retry after ${retryAfterSeconds} s, or raise worker.mailboxSize / worker.concurrency.`;
export const TENANT_MAILBOX_FULL_MESSAGE = (share: number, retryAfterSeconds: number) =>
  `This tenant's share of the agent worker's mailbox is full (${share} goals waiting). Retry after ${retryAfterSeconds} s, or raise worker.mailboxPerTenant.`;
export const INVALID_GOAL_MESSAGE = (problem: string) => `Invalid goal: ${problem}.`;
export const INVALID_WORKER_OPTIONS_MESSAGE = (field: string, problem: string) =>
  `Invalid AgentWorkerModule option '${field}': ${problem}.`;
export const QUEUE_NEEDS_POSTGRES_MESSAGE =
  "queue.driver 'pg-boss' (cluster mode) needs a PostgreSQL server that every instance reaches: the app's TypeORM DataSource is not one (PGlite lives inside one process). Set queue.connectionString to postgres://..., or use the default in-process queue";
export const RUN_CRASHED_MESSAGE = (cause: string) => `The run threw: ${cause}`;
export const INVALID_JOBS_OPTIONS_MESSAGE = (field: string, problem: string) => `Invalid AgentJobsModule option '${field}': ${problem}.`;
export const WORKER_NEEDS_AGENTS_MESSAGE =
  'the AgentWorker runs the agents of AgentModule: import AgentModule.forRoot({ agents: [...] }) next to AgentWorkerModule';
export const JOBS_NEED_WORKER_MESSAGE =
  "scheduled jobs post their goals to the AgentWorker: import AgentWorkerModule.forRoot({ runStore: 'typeorm' }) (or 'memory') next to AgentJobsModule, or remove AgentJobsModule";
export const DUPLICATE_STATIC_JOB_MESSAGE = (name: string, owners: readonly string[]) =>
  `@AgentJob "${name}" is declared twice (${owners.join(' and ')}): static job names must be unique (the job id is static:<name>)`;
export const JOB_AGENT_MESSAGE = (agent: string, known: readonly string[]) =>
  agent === '(none)'
    ? `name its agent: this application defines ${known.length} agents (${known.join(', ') || 'none'})`
    : `no agent named '${agent}' (agents: ${known.join(', ') || 'none'})`;

export const MCP_CLIENT_SDK_MISSING_MESSAGE = (pkg: string, range: string) =>
  `AgentModule has mcpServers, which need the MCP client SDK, an optional peer dependency of @zmodu/agent that is not installed: run \`npm install ${pkg}@${range}\` (or remove mcpServers).`;
export const MCP_CLIENT_SDK_TOO_OLD_MESSAGE = (pkg: string, range: string, missing: readonly string[]) =>
  `AgentModule's mcpServers need ${pkg}@${range}; the installed version has no ${missing.join(', ')}: run \`npm install ${pkg}@${range}\`.`;
export const MCP_CLIENT_SDK_BROKEN_MESSAGE = (pkg: string, cause: string) =>
  `AgentModule's mcpServers could not load ${pkg} (${cause.split('\n')[0].slice(0, 300)}): reinstall it (\`npm install ${pkg}\`).`;
export const SCHEDULE_PACKAGE_MESSAGE = (use: string, problem: string) =>
  `${use} needs the package @nestjs/schedule (an optional peer dependency of @zmodu/agent), which ${problem}`;
export const SCHEDULE_NOT_INSTALLED = 'is not installed: npm install @nestjs/schedule@^12';
export const SCHEDULE_NOT_REQUIRABLE = (node: string) =>
  `is an ES module that this Node.js (${node}) cannot require: run Node.js 22.12+ (require of ES modules)`;
export const SCHEDULE_LOAD_FAILED = (cause: string) => `could not be loaded (${cause}): reinstall it with npm install @nestjs/schedule@^12`;
export const AGENT_CRON_NEEDS_JOBS_MESSAGE = (owner: string) =>
  `@AgentCron on ${owner} claims its ticks in the job store: import AgentJobsModule.forRoot({ store: 'typeorm' }) (and AgentWorkerModule.forRoot(...)), or remove @AgentCron`;
export const AGENT_JOB_NEEDS_JOBS_MESSAGE = (owner: string) =>
  `@AgentJob on ${owner} is run by the job scheduler: import AgentJobsModule.forRoot({ store: 'typeorm' }) (and AgentWorkerModule.forRoot(...)), or remove @AgentJob`;
export const AGENT_CRON_NEEDS_SCHEDULE_MODULE_MESSAGE = (owners: readonly string[]) =>
  `@AgentCron on ${owners.join(', ')} is a @Cron of @nestjs/schedule, which fires only when the application imports ScheduleModule.forRoot(): import it in your root module`;
export const DUPLICATE_AGENT_CRON_MESSAGE = (name: string, owners: readonly string[]) =>
  `@AgentCron "${name}" is declared twice (${owners.join(' and ')}): names must be unique (its ticks are claimed as cron:<name>)`;

export const JOURNAL_MISMATCH_MESSAGE = (expected: string, found: string) =>
  `the run's journal does not match the run (the agent changed since an earlier attempt?): expected ${expected}, found ${found}`;
export const OUTCOME_UNKNOWN_MESSAGE = (skill: string) =>
  `${skill} was running when this run's previous attempt stopped (its process died): it may or may not have taken effect, ` +
  'so it was not run again. Check its effect before you call it again.';
export const JOURNAL_CONFLICT_MESSAGE = (runId: string, seq: number) =>
  `run ${runId}: its journal holds another entry at place ${seq}: an entry is written once, and this one differs`;
export const NOT_THIS_RUNS_PROPOSAL_MESSAGE = 'no proposal of this run has that id: nothing waits for a decision on it';
export const ARGUMENTS_NOT_KEPT_MESSAGE = (skill: string) =>
  `${skill} was not run: this run was taken up again after its process died, and the arguments of this call were not ` +
  'kept (they hold sensitive fields). Call it again with its arguments.';

/** A decision the run was owed (resumeOn 'each'), told after the model went on without it. */
export const LATE_DECISION_MESSAGE = (proposalId: string, observation: string) =>
  `The decision on proposal ${proposalId}, which was pending when you went on, has been made: ${observation}`;

/** A run that would wait for a human past its tenant's bound (AgentWorkerOptions.maxWaitingPerTenant). */
export const WAITING_FULL_MESSAGE = (max: number) =>
  `The run would wait for a human, but its tenant has ${max} runs waiting already (maxWaitingPerTenant): it ended at its proposals, which stay in the approval queue (a decision still executes them; this run does not hear it).`;
