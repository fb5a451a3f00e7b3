import 'reflect-metadata';
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { auditPolicy, verifyAuditChain } from '@zmodu/guard';
import { scopeIdProblem } from '@zmodu/core';
import { SkillCallResult, toOpenApi, toSkillsJson } from '@zmodu/skills';
import { installTenantFence, tenantFenceStatus } from '@zmodu/data';
import { flag, idFlag, parseArgs } from './cli-args';
import { CliConfig, loadConfig, UsageError } from './cli-config';
import { CallRequest, CliRuntime } from './cli-runtime';
import { AppRuntime } from './app-runtime';

const HELP: Record<string, string> = {
  main: `zmodu: the skills of an application, from the command line, through the same guard and dispatcher.

usage: zmodu ai <command> [options]

commands:
  call           dispatch one skill call, or a batch of them
  mcp            serve the skills as an MCP server over stdio (for Claude Desktop, IDEs, agents)
  export-skills  print the skill catalog as skills JSON
  openapi        print the skill catalog as an OpenAPI 3.1 document
  audit-policy   report the health of the config's policy and of db.query's second fence
                 (exit 1 on a blind spot, an inert policy, an unknown skill on the allow list,
                 or db.query allowed without its fence)
  install-fence  install or update db.query's second fence in the database (reader role,
                 grants, row-level security); idempotent, prints what it did
  audit-data     report hazards of the data model the entities expose (exit 1 on any)
  audit-verify   check a tenant's audit hash chain in the database (exit 1 at the first bad entry)

Every command takes --config FILE (a zmodu.config.json: the data skills it declares, on its database) and --help.
call, export-skills, openapi and audit-policy take --app FILE#Module instead: the application's own module (its
compiled file, e.g. dist/app.module.js#AppModule) booted without HTTP, with every skill it registers; calls run
under one of its agents' policy (--agent NAME, or its only agent). Which of the two it talks to is printed on stderr.`,
  call: `usage: zmodu ai call <skill> --config F --tenant T --user U [--permissions a,b] --args JSON
       zmodu ai call <skill> --app FILE#Module [--agent A] --tenant T --user U [--permissions a,b] --args JSON
       zmodu ai call --batch FILE.jsonl (--config F | --app FILE#Module [--agent A])

One call: prints the result as JSON; exit 0 on success, 1 with {"error","reason"} on a refusal or failure.
Batch: one call a line, {"skill","args","tenant","user","permissions"} (tenant and user: a string or a whole
number, which the call sees as its decimal string); one JSON result a line, in order;
exit 0 when every call succeeded, 1 when any did not (every line is still answered).`,
  mcp: `usage: zmodu ai mcp --config F --tenant T --user U [--permissions a,b]

Serves the config's skills as an MCP server over stdio (JSON-RPC on stdout, logs on stderr), for one caller:
the tenant and user given, with the permissions given (default: the config's "permissions").
tools/list shows what the config's policy and those permissions let through (staged skills never);
tools/call goes through the same guard and dispatcher as zmodu ai call. Ends when the client closes stdin.`,
  'export-skills':
    'usage: zmodu ai export-skills --config F\n\nPrints [{ name, description, action, requiredPermission, tenantScoped, timeoutMs, parameters }].',
  openapi:
    'usage: zmodu ai openapi --config F [--title T] [--version V] [--base-path /skills]\n\nPrints an OpenAPI 3.1 document with one POST operation per skill.',
  'audit-policy':
    'usage: zmodu ai audit-policy --config F\n\nPrints { inert, unknownTools, classDeniedTools, hasClassBlindSpot, effectiveTools, unknownAllowed, secondFence }; ' +
    'exit 1 on a blind spot, an inert policy, an allow list naming a skill that does not exist\n' +
    '(unknownAllowed: [{ name, nearest }], also one line each on stderr), or when the policy allows db.query and its second fence is missing\n' +
    '(secondFence: { installed, role, problems, warnings }; installed is null when the config has no database).',
  'install-fence': `usage: zmodu ai install-fence --config F [--role R] [--app-role R]

Creates or updates, in one transaction, db.query's second fence for the config's entities:
  - a reader role (default zmodu_reader, or "fence.role" in the config; NOLOGIN), made a member-of
    target for the application role (--app-role, default the connecting user), which may SET ROLE to it;
  - SELECT grants on the registered tables and declared columns only;
  - row-level security on each tenant table: the reader sees only the rows of the tenant that
    db.query checked (a MAC under a key in schema zmodu_fence that the reader cannot read);
    other roles keep what they had;
  - run by a superuser: EXECUTE on set_config taken from PUBLIC and granted to the application role,
    so the reader cannot leave its role (otherwise it prints the two statements for a superuser).
Prints one line per step: + created, ~ changed, = kept, ! note. Safe to run again.
Needs: CREATEROLE (or superuser), CREATE on the database, and ownership of the tables.`,
  'audit-data': `usage: zmodu ai audit-data --config F

Prints { tables, findings: [{ code, table, detail, fix }] } for the config's entities; exit 1 on any finding:
  unique_without_tenant  a UNIQUE over a writable column without the tenant column (a write tells that
                         another tenant holds the value)
  no_tenant_index        no index leads with the tenant column (every scoped read scans)
  shared_sequence        a serial/identity column on a writable tenant table (ids reveal other tenants' writes)
  view                   a view or materialized view as an entity (row-level security does not reach through it)
  tenant_type_mismatch   tenant columns of differing types
  missing_table, missing_tenant_column
With "strictData": true in the config, any finding stops the commands that use the database.`,
  'audit-verify': `usage: zmodu ai audit-verify --config F (--tenant T | --untenanted)

Walks the hash chain of the tenant's audit entries in the config's database (table zmodu_audit_log; --untenanted:
the entries without a tenant) and prints { ok: true, entries, head } (exit 0), or { ok: false, firstBadSequence, problem }
(exit 1) for the first entry that is not as written:
  altered    its fields no longer give its hash (a column was changed)
  deleted    an entry is missing (a gap in the sequence numbers, or the entry links to a hash no entry has)
  inserted   an entry the chain goes around (added afterwards), or a row without a chain written after the chain began
  re-linked  it links to an existing entry other than the one before it
Keep "head" somewhere else (a ticket, another system): the chain has no key, so only a head kept apart shows
a truncated or wholly rewritten chain.`,
};

const out = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);

export async function main(argv: string[]): Promise<number> {
  const [group, command, ...rest] = argv;
  if (group === undefined || group === '--help' || group === 'help') {
    process.stdout.write(`${HELP.main}\n`);
    return group === undefined ? 2 : 0;
  }
  if (group !== 'ai') throw new UsageError(`unknown command '${group}' (try: zmodu ai --help)`);
  if (command === undefined || command === '--help') {
    process.stdout.write(`${HELP.main}\n`);
    return command === undefined ? 2 : 0;
  }
  switch (command) {
    case 'call':
      return call(rest);
    case 'mcp':
      return mcp(rest);
    case 'export-skills':
    case 'openapi':
    case 'audit-policy':
      return catalog(command, rest);
    case 'install-fence':
      return installFence(rest);
    case 'audit-data':
      return auditData(rest);
    case 'audit-verify':
      return auditVerify(rest);
    default:
      throw new UsageError(
        `unknown command 'ai ${command}' (commands: call, mcp, export-skills, openapi, audit-policy, install-fence, audit-data, audit-verify)`,
      );
  }
}

async function catalog(command: 'export-skills' | 'openapi' | 'audit-policy', argv: string[]): Promise<number> {
  const args = parseArgs(argv, ['--config', '--app', '--title', '--version', '--base-path']);
  if (args.flags.has('--help')) return help(command);
  if (args.positional.length) throw new UsageError(`unexpected argument ${args.positional[0]}`);
  const appSpec = appFlag(args);
  if (appSpec !== undefined) return appCatalog(command, appSpec, args);
  const config = loadConfig(flag(args, '--config'));
  // audit-policy looks at the database too, when the config names one.
  const withDatabase = command === 'audit-policy' && config.database !== undefined;
  const runtime = await CliRuntime.start(config, withDatabase, true);
  try {
    if (command === 'export-skills') out(toSkillsJson(runtime.registry));
    else if (command === 'openapi')
      out(
        toOpenApi(runtime.registry, {
          title: flag(args, '--title'),
          version: flag(args, '--version'),
          basePath: flag(args, '--base-path'),
        }),
      );
    else {
      const health = auditPolicy(runtime.registry, config.policy);
      // A typo on the allow list silently disables a tool: name it, and the nearest skill there is.
      const known = runtime.registry.list().map((s) => s.name);
      const allowed = new Set(config.policy.allow);
      const unknownAllowed = health.unknownTools
        .filter((name) => allowed.has(name))
        .map((name) => ({ name, nearest: nearestName(name, known) ?? null }));
      const role = config.fence?.role;
      const secondFence = withDatabase
        ? await tenantFenceStatus(runtime.database, runtime.businessSkills.fenceTables(), { role })
        : { installed: null, role: role ?? 'zmodu_reader', problems: ['the config has no "database": cannot tell'], warnings: [] };
      out({ ...health, unknownAllowed, secondFence });
      for (const u of unknownAllowed)
        process.stderr.write(`allow list names '${u.name}', which is not a skill${u.nearest ? ` (did you mean '${u.nearest}'?)` : ''}\n`);
      const fenceMissing = secondFence.installed === false && config.fence?.mode !== 'off' && health.effectiveTools.includes('db.query');
      return health.inert || health.hasClassBlindSpot || fenceMissing || unknownAllowed.length > 0 ? 1 : 0;
    }
    return 0;
  } finally {
    await runtime.close();
  }
}

/** `--app FILE#Module`, which excludes --config: the CLI talks to the application, or to the config, never both. */
function appFlag(args: ReturnType<typeof parseArgs>): string | undefined {
  const app = flag(args, '--app');
  if (app !== undefined && args.flags.has('--config'))
    throw new UsageError("give --config F (the config's data skills) or --app FILE#Module (the application's skills), not both");
  if (app === undefined && args.flags.has('--agent')) throw new UsageError('--agent names an agent of --app FILE#Module');
  return app;
}

async function startApp(spec: string): Promise<AppRuntime> {
  const runtime = await AppRuntime.start(spec);
  process.stderr.write(`zmodu: talking to ${runtime.source} (${runtime.registry.list().length} skills)\n`);
  return runtime;
}

async function appCatalog(
  command: 'export-skills' | 'openapi' | 'audit-policy',
  spec: string,
  args: ReturnType<typeof parseArgs>,
): Promise<number> {
  const runtime = await startApp(spec);
  try {
    if (command === 'export-skills') out(runtime.toSkillsJson());
    else if (command === 'openapi')
      out(runtime.toOpenApi({ title: flag(args, '--title'), version: flag(args, '--version'), basePath: flag(args, '--base-path') }));
    else {
      // Each agent's policy, as the application audits it at boot.
      const agents = runtime.policies();
      out({ agents });
      return Object.values(agents).some((h) => h.inert || h.hasClassBlindSpot || h.unknownTools.length > 0) ? 1 : 0;
    }
    return 0;
  } finally {
    await runtime.close();
  }
}

async function auditData(argv: string[]): Promise<number> {
  const args = parseArgs(argv, ['--config']);
  if (args.flags.has('--help')) return help('audit-data');
  if (args.positional.length) throw new UsageError(`unexpected argument ${args.positional[0]}`);
  const config = loadConfig(flag(args, '--config'));
  const runtime = await CliRuntime.start(config, true, true);
  try {
    const audit = await runtime.businessSkills.auditData();
    out(audit);
    return audit.findings.length ? 1 : 0;
  } finally {
    await runtime.close();
  }
}

async function auditVerify(argv: string[]): Promise<number> {
  const args = parseArgs(argv, ['--config', '--tenant'], ['--help', '--untenanted']);
  if (args.flags.has('--help')) return help('audit-verify');
  if (args.positional.length) throw new UsageError(`unexpected argument ${args.positional[0]}`);
  const tenant = idFlag(args, '--tenant');
  if ((tenant === undefined) === !args.flags.has('--untenanted'))
    throw new UsageError("audit-verify needs --tenant T (one tenant's chain) or --untenanted (the entries without a tenant)");
  const config = loadConfig(flag(args, '--config'));
  const runtime = await CliRuntime.start(config, true, true);
  try {
    const verdict = await verifyAuditChain(runtime.database, tenant ?? null);
    out(verdict);
    return verdict.ok ? 0 : 1;
  } finally {
    await runtime.close();
  }
}

async function installFence(argv: string[]): Promise<number> {
  const args = parseArgs(argv, ['--config', '--role', '--app-role']);
  if (args.flags.has('--help')) return help('install-fence');
  if (args.positional.length) throw new UsageError(`unexpected argument ${args.positional[0]}`);
  const config = loadConfig(flag(args, '--config'));
  const runtime = await CliRuntime.start(config, true, true);
  try {
    const role = flag(args, '--role') ?? config.fence?.role;
    const tables = runtime.businessSkills.fenceTables();
    const actions = await installTenantFence(runtime.database, tables, { role, appRole: flag(args, '--app-role') });
    const mark = { created: '+', changed: '~', kept: '=', note: '!' } as const;
    for (const a of actions) process.stdout.write(`${mark[a.kind]} ${a.what}\n`);
    const status = await tenantFenceStatus(runtime.database, tables, { role });
    process.stdout.write(
      status.installed
        ? `fence installed for ${tables.length} table(s); db.query runs as ${status.role}\n`
        : `fence incomplete: ${status.problems.join('; ')}\n`,
    );
    return status.installed ? 0 : 1;
  } finally {
    await runtime.close();
  }
}

async function call(argv: string[]): Promise<number> {
  const args = parseArgs(argv, ['--config', '--app', '--agent', '--tenant', '--user', '--permissions', '--args', '--batch']);
  if (args.flags.has('--help')) return help('call');
  const appSpec = appFlag(args);
  const agentName = flag(args, '--agent');
  const config = appSpec === undefined ? loadConfig(flag(args, '--config')) : undefined;
  const batch = flag(args, '--batch');
  if (batch) {
    if (args.positional.length || args.flags.has('--args'))
      throw new UsageError('--batch takes no skill name and no --args: each line names its own');
    return runBatch(config, appSpec, agentName, batch);
  }
  if (args.positional.length !== 1) throw new UsageError('name one skill: zmodu ai call <skill> --args JSON ...');
  let parsed: unknown = {};
  const text = flag(args, '--args');
  if (text !== undefined) {
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      throw new UsageError(`--args is not valid JSON: ${(err as Error).message}`);
    }
  }
  const req = {
    skill: args.positional[0],
    args: parsed,
    tenant: idFlag(args, '--tenant'),
    user: idFlag(args, '--user'),
    permissions: permissionList(flag(args, '--permissions')),
  };
  const runtime = await startCalls(config, appSpec, agentName);
  try {
    const result = await runtime.call(req);
    out(result.ok ? result.value : result.error);
    return result.ok ? 0 : 1;
  } finally {
    await runtime.close();
  }
}

async function mcp(argv: string[]): Promise<number> {
  const args = parseArgs(argv, ['--config', '--tenant', '--user', '--permissions']);
  if (args.flags.has('--help')) return help('mcp');
  if (args.positional.length) throw new UsageError(`unexpected argument ${args.positional[0]}`);
  const config = loadConfig(flag(args, '--config'));
  const tenantId = idFlag(args, '--tenant');
  const userId = idFlag(args, '--user');
  if (!tenantId || !userId) throw new UsageError('zmodu ai mcp serves one caller: give --tenant T and --user U');
  const permissions = permissionList(flag(args, '--permissions')) ?? config.permissions ?? [];
  const runtime = await CliRuntime.start(config, true);
  try {
    // Loaded by the one command that serves MCP: every other command starts without the MCP SDK.
    const { serveMcpOverStdio } = await import('@zmodu/mcp');
    const session = await serveMcpOverStdio({
      registry: runtime.registry,
      dispatcher: runtime.dispatcher,
      policy: config.policy,
      principal: { tenantId, userId, permissions },
      agent: 'mcp',
      serverInfo: { name: 'zmodu', version: '0.1.0' },
    });
    const listed = session.server.listTools({ tenantId, userId, permissions }).length;
    process.stderr.write(`zmodu: MCP server on stdio, ${listed} tool(s) for user ${userId} of tenant ${tenantId}\n`);
    await session.closed;
    return 0;
  } finally {
    await runtime.close();
  }
}

function permissionList(text: string | undefined): string[] | undefined {
  return text
    ?.split(',')
    .map((p) => p.trim())
    .filter(Boolean);
}

/** What calls go through: the config's runtime, or the application's under one agent's policy (checked before any call). */
interface Calls {
  call(req: CallRequest): Promise<SkillCallResult>;
  close(): Promise<void>;
}

async function startCalls(config: CliConfig | undefined, appSpec: string | undefined, agentName: string | undefined): Promise<Calls> {
  if (config) return CliRuntime.start(config, true);
  const runtime = await startApp(appSpec as string);
  try {
    const agent = runtime.agent(agentName);
    process.stderr.write(`zmodu: calls run under the policy of agent '${agent.name}'\n`);
  } catch (err) {
    await runtime.close();
    throw err;
  }
  return { call: (req) => runtime.call(req, agentName), close: () => runtime.close() };
}

async function runBatch(
  config: CliConfig | undefined,
  appSpec: string | undefined,
  agentName: string | undefined,
  file: string,
): Promise<number> {
  const stream = createReadStream(file, 'utf8');
  const opened = new Promise<void>((resolve, reject) => {
    stream.once('open', () => resolve());
    stream.once('error', () => reject(new UsageError(`cannot read batch file ${file}`)));
  });
  await opened;
  const runtime = await startCalls(config, appSpec, agentName);
  let failures = 0;
  let lineNo = 0;
  try {
    for await (const line of createInterface({ input: stream, crlfDelay: Infinity })) {
      lineNo++;
      if (line.trim() === '') continue;
      const result = await batchLine(runtime, line, lineNo);
      if (!result.ok) failures++;
      out(result.ok ? { ok: true, line: lineNo, value: result.value } : { ok: false, line: lineNo, ...result.error });
    }
  } finally {
    await runtime.close();
  }
  return failures === 0 ? 0 : 1;
}

type LineResult = { ok: true; value: unknown } | { ok: false; error: { error: string; reason: string; [k: string]: unknown } };

async function batchLine(runtime: Calls, line: string, lineNo: number): Promise<LineResult> {
  let req: Record<string, unknown>;
  try {
    req = JSON.parse(line);
  } catch {
    return { ok: false, error: { error: 'BadRequest', reason: 'invalid_json', message: `line ${lineNo} is not JSON` } };
  }
  if (!req || typeof req !== 'object' || Array.isArray(req) || typeof req.skill !== 'string')
    return {
      ok: false,
      error: { error: 'BadRequest', reason: 'invalid_call', message: 'each line is {"skill","args","tenant","user","permissions"}' },
    };
  const perms = req.permissions;
  if (perms !== undefined && (!Array.isArray(perms) || perms.some((p) => typeof p !== 'string')))
    return { ok: false, error: { error: 'BadRequest', reason: 'invalid_call', message: 'permissions must be an array of strings' } };
  const ids: { tenant?: string; user?: string } = {};
  for (const k of ['tenant', 'user'] as const) {
    const id = callerId(k, req[k]);
    if (id.ok) ids[k] = id.value;
    else return { ok: false, error: { error: 'BadRequest', reason: 'invalid_call', message: id.reason } };
  }
  let result: SkillCallResult;
  try {
    result = await runtime.call({
      skill: req.skill,
      args: req.args ?? {},
      tenant: ids.tenant,
      user: ids.user,
      permissions: perms as string[] | undefined,
    });
  } catch (err) {
    return { ok: false, error: { error: 'SkillFailed', reason: 'internal_error', message: (err as Error).message } };
  }
  return result.ok ? { ok: true, value: result.value } : { ok: false, error: result.error as { error: string; reason: string } };
}

/**
 * A batch line's tenant or user: a string, or a JSON number that is a safe integer (tenant ids are often integers in
 * the database), which reaches the context as its decimal string; then an id under scopeIdProblem's rule (no control,
 * format or invisible character, NFC, ...). Absent or null: none. The reason names the field.
 */
export function callerId(name: string, v: unknown): { ok: true; value: string | undefined } | { ok: false; reason: string } {
  if (v === undefined || v === null) return { ok: true, value: undefined };
  let text: string;
  if (typeof v === 'string') text = v;
  else if (typeof v === 'number' && Number.isSafeInteger(v)) text = String(v);
  else if (typeof v === 'number' && Number.isInteger(v))
    return {
      ok: false,
      reason: `${name} must be a string or a whole number up to 2^53-1 (got ${String(v)}; write a larger id as a string)`,
    };
  else
    return {
      ok: false,
      reason: `${name} must be a string or a whole number (got ${typeof v === 'number' ? String(v) : Array.isArray(v) ? 'an array' : typeof v})`,
    };
  const problem = scopeIdProblem(name, text);
  return problem ? { ok: false, reason: problem } : { ok: true, value: text };
}

/** The known name closest to `name` (edit distance at most 2, and at most a quarter of its length), if any. */
export function nearestName(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.min(2, Math.ceil(name.length / 4)) + 1;
  for (const candidate of known) {
    const d = editDistance(name, candidate);
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return best;
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 3) return Infinity;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length];
}

function help(command: string): number {
  process.stdout.write(`${HELP[command]}\n`);
  return 0;
}
