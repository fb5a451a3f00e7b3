import 'reflect-metadata';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import type { Request as CannonRequest } from 'autocannon';
import { postgresServer, withBenchDatabase } from '../bench-database';
import {
  concurrencies,
  fmt,
  judgeFlat,
  markdownTable,
  MemorySample,
  mib,
  renderTable,
  ScenarioResult,
  StepResult,
  stopReason,
} from './rules';
import { SampleProcess } from './sample-process';
import { memoryChartSvg } from './svg';
import {
  analystRun,
  approvalsDecide,
  approvalsList,
  Callers,
  closeMcpSessions,
  DB_QUERY_SQL,
  mcpToolCall,
  McpSession,
  openMcpSessions,
  PendingProposal,
  ScenarioRequest,
  seedProposals,
  traderRun,
} from './traffic';

const ROOT = join(__dirname, '..', '..');
const USAGE = `npm run load [-- flags]   (each flag also has an environment variable)
  --step-s N           seconds per concurrency step (ZMODU_LOAD_STEP_S, default 10)
  --max-connections N  the highest concurrency tried (ZMODU_LOAD_MAX_CONNECTIONS, default 128)
  --scenarios a,b      only these scenarios (ZMODU_LOAD_SCENARIOS): trader-run, analyst-run, approvals-list,
                       approvals-decide, mcp-quote, mcp-db-query
  --soak-s N           soak length in seconds, 0 skips it (ZMODU_LOAD_SOAK_S, default 600)
  --soak-connections N concurrency of the soak's mixed traffic (ZMODU_LOAD_SOAK_CONNECTIONS, default 8)
  --sample-s N         seconds between memory samples in the soak (ZMODU_LOAD_SAMPLE_S, default 10)
  --fuzz-runs N        cases per fuzzer of test/fuzz.e2e-spec.ts, 0 skips it (ZMODU_LOAD_FUZZ_RUNS, default 400)
  --postgres           a PostgreSQL server of the run's own (scripts/postgres.sh, durable) instead of PGlite
  --ts-node            run the sample's sources with ts-node instead of dist/apps/sample/main.js
DATABASE_URL set: the sample runs on a database the run creates on that server (and drops).`;

interface LoadOptions {
  readonly stepSeconds: number;
  readonly maxConnections: number;
  readonly scenarios: readonly string[] | null;
  readonly soakSeconds: number;
  readonly soakConnections: number;
  readonly sampleSeconds: number;
  readonly fuzzRuns: number;
  readonly postgres: boolean;
  readonly tsNode: boolean;
}

function parseOptions(argv: string[], env: NodeJS.ProcessEnv): LoadOptions {
  const flags = new Map<string, string>();
  const switches = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--help' || a === '-h') {
      console.log(USAGE);
      process.exit(0);
    }
    if (a === '--postgres' || a === '--ts-node') switches.add(a);
    else if (a.startsWith('--') && argv[i + 1] !== undefined) flags.set(a, argv[++i]);
    else throw new Error(`bad argument ${a}\n${USAGE}`);
  }
  const num = (flag: string, name: string, fallback: number, min: number) => {
    const raw = flags.get(flag) ?? env[name];
    flags.delete(flag);
    if (raw === undefined || raw === '') return fallback;
    const v = Number(raw);
    if (!Number.isInteger(v) || v < min) throw new Error(`${flag} / ${name} must be a whole number >= ${min} (got "${raw}")`);
    return v;
  };
  const scenarios = (flags.get('--scenarios') ?? env.ZMODU_LOAD_SCENARIOS ?? '').trim();
  flags.delete('--scenarios');
  const options: LoadOptions = {
    stepSeconds: num('--step-s', 'ZMODU_LOAD_STEP_S', 10, 1),
    maxConnections: num('--max-connections', 'ZMODU_LOAD_MAX_CONNECTIONS', 128, 1),
    scenarios: scenarios ? scenarios.split(',').map((s) => s.trim()) : null,
    soakSeconds: num('--soak-s', 'ZMODU_LOAD_SOAK_S', 600, 0),
    soakConnections: num('--soak-connections', 'ZMODU_LOAD_SOAK_CONNECTIONS', 8, 1),
    sampleSeconds: num('--sample-s', 'ZMODU_LOAD_SAMPLE_S', 10, 1),
    fuzzRuns: num('--fuzz-runs', 'ZMODU_LOAD_FUZZ_RUNS', 400, 0),
    postgres: switches.has('--postgres'),
    tsNode: switches.has('--ts-node'),
  };
  if (flags.size) throw new Error(`unknown flag ${[...flags.keys()].join(', ')}\n${USAGE}`);
  return options;
}

/**
 * The sample's settings for the load, through its own environment variables (the defaults stay as they are):
 * - ZMODU_RATE_LIMIT: the edge's per-caller limit (default 600 a minute). The MCP scenarios call through 16 sessions
 *   of 16 callers, hundreds of calls a second each: at the default they are answered 429 within seconds.
 * - ZMODU_TRADER_TOKENS_PER_DAY: the trader's daily tokens per tenant (default 1,000,000; a scripted run counts about
 *   600): at the default, the trader's runs stop with budget_exhausted after about 1,700 runs per tenant.
 * - LOG_LEVEL=warn: the JSON log of every request at info costs the sample as much as some requests; warnings and
 *   errors are still written, kept and reported.
 */
const LOAD_ENV = {
  ZMODU_RATE_LIMIT: '100000000',
  ZMODU_TRADER_TOKENS_PER_DAY: '999999999999',
  LOG_LEVEL: 'warn',
};

/** Callers per tenant in the trader pool: at most 30 proposals a minute each (the pipeline's velocity rule). */
const TRADER_POOL = 500;
const MCP_SESSIONS = 16;
/** Requests before a scenario's first measured step, not counted (JIT, pools, caches). */
const WARMUP_REQUESTS = 60;

interface Problems {
  count: number;
  examples: string[];
}

interface Measured extends StepResult {
  readonly problems: readonly string[];
}

/** One autocannon run of a request: for `seconds`, or for exactly `amount` requests. */
async function measure(
  url: string,
  request: ScenarioRequest | ScenarioRequest[],
  connections: number,
  length: { seconds: number } | { amount: number },
): Promise<Measured> {
  const requests = Array.isArray(request) ? request : [request];
  const problems: Problems = { count: 0, examples: [] };
  const wrapped = requests.map(({ check, onResponse, setupRequest, ...rest }) => ({
    ...rest,
    // The request as sent, kept in the connection's context for the report of a bad answer.
    setupRequest: (req: CannonRequest, context: object) => {
      const built = typeof setupRequest === 'function' ? setupRequest(req, context) : req;
      if (built) (context as { sent?: string }).sent = `${built.method} ${built.path}`;
      return built;
    },
    onResponse: (status: number, body: string, context: object, headers: CannonRequest['headers']) => {
      const problem = check(status, body);
      if (problem !== null) {
        problems.count++;
        if (problems.examples.length < 5) problems.examples.push(`${(context as { sent?: string }).sent ?? rest.path}: ${problem}`);
      }
      if (typeof onResponse === 'function') onResponse(status, body, context, headers);
    },
  }));
  const result = await autocannon({
    url,
    connections,
    timeout: 30,
    requests: wrapped,
    ...('seconds' in length ? { duration: length.seconds } : { amount: length.amount }),
  });
  const statuses: Record<string, number> = {};
  for (const [code, s] of Object.entries(result.statusCodeStats ?? {})) statuses[code] = s.count ?? 0;
  const responses = Object.values(statuses).reduce((a, b) => a + b, 0);
  // Bad 2xx bodies are the problems that are not a non-2xx (those autocannon counts in non2xx).
  const bad2xx = Math.max(0, problems.count - result.non2xx);
  return {
    connections,
    requests: responses,
    seconds: result.duration,
    rps: responses / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx + bad2xx,
    statuses,
    problems: problems.examples,
  };
}

interface Scenario {
  readonly key: string;
  readonly name: string;
  prepare?(): Promise<void>;
  /**
   * The request of a step and its length: a duration, or a request count for a scenario that uses up what it seeds.
   * `previous`: the scenario's step before (none for the warm-up and the first step).
   */
  step(connections: number, previous: StepResult | undefined, warmup: boolean): Promise<{ request: ScenarioRequest; length: Length }>;
  cleanup?(): Promise<void>;
}
type Length = { seconds: number } | { amount: number };

function allScenarios(url: string, callers: Callers, options: LoadOptions): Scenario[] {
  const seconds = { seconds: options.stepSeconds };
  let sessions: McpSession[] = [];
  const mcp = (key: string, name: string, tool: string, args: Record<string, unknown>, expect: RegExp): Scenario => ({
    key,
    name,
    prepare: async () => {
      sessions = await openMcpSessions(url, callers, MCP_SESSIONS);
    },
    step: async () => ({ request: mcpToolCall(sessions, tool, args, expect), length: seconds }),
    cleanup: async () => closeMcpSessions(url, sessions.splice(0)),
  });
  return [
    {
      key: 'trader-run',
      name: 'agent run: trader (quote, propose)',
      step: async () => ({ request: traderRun(callers, TRADER_POOL), length: seconds }),
    },
    {
      key: 'analyst-run',
      name: 'agent run: analyst (quote + db.query)',
      step: async () => ({ request: analystRun(callers, TRADER_POOL), length: seconds }),
    },
    {
      key: 'approvals-list',
      name: 'approvals list (pending, 20 a page)',
      step: async () => ({ request: approvalsList(callers), length: seconds }),
    },
    {
      key: 'approvals-decide',
      name: 'approvals decide (approve, executes)',
      // Each step approves proposals seeded for it before it starts (not timed): about a step's length at the rate of
      // the step before (20/s before the first), and at least 10 per connection.
      step: async (connections, previous, warmup) => {
        const rate = previous?.rps ?? 20;
        const amount = warmup ? WARMUP_REQUESTS : Math.max(connections * 10, Math.round(rate * 1.2 * options.stepSeconds));
        const queue: PendingProposal[] = await seedProposals(url, callers, amount);
        return { request: approvalsDecide(callers, () => queue.shift() ?? null), length: { amount } };
      },
    },
    mcp('mcp-quote', 'MCP tools/call market.quote', 'market.quote', { symbol: 'ACME' }, /"price":/),
    mcp('mcp-db-query', 'MCP tools/call db.query (GROUP BY)', 'db.query', { sql: DB_QUERY_SQL }, /"rows":\[/),
  ];
}

interface ScenarioReport extends ScenarioResult {
  readonly key: string;
  readonly problems: readonly string[];
}

async function runScenario(url: string, scenario: Scenario, options: LoadOptions): Promise<ScenarioReport> {
  await scenario.prepare?.();
  try {
    const warmConnections = Math.min(2, options.maxConnections);
    const warm = await scenario.step(warmConnections, undefined, true);
    await measure(url, warm.request, warmConnections, { amount: WARMUP_REQUESTS });
    const steps: Measured[] = [];
    let stoppedBecause = 'no steps';
    for (const connections of concurrencies(options.maxConnections)) {
      const { request, length } = await scenario.step(connections, steps[steps.length - 1], false);
      const step = await measure(url, request, connections, length);
      steps.push(step);
      console.log(
        `  ${scenario.key.padEnd(17)} c=${String(connections).padStart(3)}  ${fmt(step.rps).padStart(7)} req/s  ` +
          `p50 ${fmt(step.p50).padStart(6)} ms  p99 ${fmt(step.p99).padStart(6)} ms  errors ${step.errors}` +
          (step.errors ? `  statuses ${JSON.stringify(step.statuses)}` : ''),
      );
      for (const p of step.problems) console.log(`      ${p}`);
      const reason = stopReason(steps, { factor: 2, maxConnections: options.maxConnections });
      if (reason) {
        stoppedBecause = reason;
        break;
      }
    }
    console.log(`  ${scenario.key}: stopped, ${stoppedBecause}`);
    return {
      key: scenario.key,
      name: scenario.name,
      steps: steps.map(({ problems: _p, ...s }) => s),
      stoppedBecause,
      problems: steps.flatMap((s) => s.problems),
    };
  } finally {
    await scenario.cleanup?.();
  }
}

interface SoakReport {
  readonly seconds: number;
  readonly connections: number;
  readonly result: Omit<Measured, 'problems'>;
  readonly problems: readonly string[];
  readonly samples: readonly (MemorySample & { heapTotal: number; external: number; arrayBuffers: number; gc: boolean })[];
  readonly flat: ReturnType<typeof judgeFlat>;
  readonly rule: string;
}

const FLAT_RULE = { tolerance: 0.1, slackBytes: 4 * 1024 * 1024 };
const FLAT_RULE_TEXT =
  'samples split into thirds by time; the first (warm-up) is not judged; flat when the median heap used and the median RSS ' +
  "of the last third are each at most 10 % + 4 MiB above the second third's (every sample taken after a full GC in the sample)";

/**
 * The soak: mixed traffic at a moderate concurrency for `seconds`, every connection cycling through a trader run (its
 * proposal queued), the approval of a queued proposal, the approvals list, an MCP quote, an MCP db.query and an analyst
 * run; the sample's memory read every `sampleSeconds` (after a full GC).
 */
async function soak(sample: SampleProcess, callers: Callers, options: LoadOptions): Promise<SoakReport> {
  const sessions = await openMcpSessions(sample.url, callers, MCP_SESSIONS);
  const queue: PendingProposal[] = [];
  const samples: SoakReport['samples'][number][] = [];
  const started = Date.now();
  const read = async () => {
    const m = await sample.memory();
    samples.push({
      t: (Date.now() - started) / 1000,
      heapUsed: m.heapUsed,
      rss: m.rss,
      heapTotal: m.heapTotal,
      external: m.external,
      arrayBuffers: m.arrayBuffers,
      gc: m.gc,
    });
    const last = samples[samples.length - 1];
    console.log(`  soak t=${Math.round(last.t)} s: heap ${mib(last.heapUsed)} MiB, RSS ${mib(last.rss)} MiB`);
  };
  try {
    await read();
    let reading: Promise<void> = Promise.resolve();
    const timer = setInterval(() => {
      reading = reading.then(read, read);
    }, options.sampleSeconds * 1000);
    const mixed = [
      traderRun(callers, TRADER_POOL, (p) => queue.push(p)),
      approvalsDecide(callers, () => queue.shift() ?? null),
      approvalsList(callers),
      mcpToolCall(sessions, 'market.quote', { symbol: 'ACME' }, /"price":/),
      mcpToolCall(sessions, 'db.query', { sql: DB_QUERY_SQL }, /"rows":\[/),
      analystRun(callers, TRADER_POOL),
    ];
    let measured: Measured;
    try {
      measured = await measure(sample.url, mixed, options.soakConnections, { seconds: options.soakSeconds });
    } finally {
      clearInterval(timer);
      await reading;
    }
    await read();
    const flat = judgeFlat(samples, FLAT_RULE);
    const { problems, ...result } = measured;
    return { seconds: options.soakSeconds, connections: options.soakConnections, result, problems, samples, flat, rule: FLAT_RULE_TEXT };
  } finally {
    await closeMcpSessions(sample.url, sessions).catch(() => undefined);
  }
}

/** test/fuzz.e2e-spec.ts with more cases (ZMODU_FUZZ_RUNS): passed or not, and jest's summary line. */
function fuzz(
  runs: number,
  testDatabaseUrl: string | undefined,
): Promise<{ runs: number; passed: boolean; summary: string; seconds: number }> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ['--experimental-vm-modules', 'node_modules/jest/bin/jest.js', 'test/fuzz.e2e-spec.ts', '--selectProjects', 'db'],
      {
        cwd: ROOT,
        env: { ...process.env, ZMODU_FUZZ_RUNS: String(runs), ...(testDatabaseUrl ? { ZMODU_TEST_DATABASE_URL: testDatabaseUrl } : {}) },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.on('exit', (code) => {
      // eslint-disable-next-line no-control-regex
      const plain = output.replace(/\x1b\[[0-9;]*m/g, '');
      const summary = /^Tests:.*$/m.exec(plain)?.[0] ?? plain.trim().split('\n').slice(-5).join(' / ');
      if (code !== 0) console.log(plain.split('\n').slice(-60).join('\n'));
      resolve({ runs, passed: code === 0, summary, seconds: (Date.now() - started) / 1000 });
    });
  });
}

interface Database {
  readonly description: string;
  readonly url?: string;
  /** The server's URL for the fuzz suite (it creates a database of its own). */
  readonly serverUrl?: string;
  readonly dataDir: string;
}

/**
 * Where the sample keeps its data, for the length of `fn`: PGlite in a temporary folder (the default); with
 * DATABASE_URL, a database of the run's own created on that server (dropped after); with --postgres, a server of the
 * run's own (scripts/postgres.sh with the server's durable settings, or ZMODU_BENCH_DATABASE_URL as for npm run bench).
 */
async function withDatabase<T>(options: LoadOptions, work: string, fn: (db: Database) => Promise<T>): Promise<T> {
  const dataDir = join(work, 'pglite');
  const given = process.env.DATABASE_URL;
  const server = given
    ? { url: given, stop: () => undefined }
    : options.postgres
      ? await postgresServer((l) => console.log(`  ${l}`))
      : null;
  if (options.postgres && !given && !server) throw new Error('--postgres: could not start a PostgreSQL server with scripts/postgres.sh');
  if (!server) return fn({ description: 'embedded PGlite', dataDir });
  const description = given ? 'PostgreSQL (a database created on DATABASE_URL)' : 'PostgreSQL (a server of its own, durable settings)';
  try {
    return await withBenchDatabase(server, 'zmodu_load', (url) => fn({ description, url, serverUrl: server.url, dataDir }));
  } finally {
    server.stop();
  }
}

interface RunOutcome {
  readonly reports: ScenarioReport[];
  readonly soakReport: SoakReport | null;
  readonly fuzzReport: Awaited<ReturnType<typeof fuzz>> | null;
  readonly exit: Awaited<ReturnType<SampleProcess['stop']>>;
  readonly warnings: readonly string[];
}

/** The sample started on `db`, the scenarios, the soak, the sample stopped; then the fuzzers. */
async function loadRun(db: Database, options: LoadOptions, work: string, secret: string): Promise<RunOutcome> {
  const callers = new Callers(secret);
  console.log(`  database: ${db.description}; the sample: ${options.tsNode ? 'ts-node' : 'dist/apps/sample/main.js'}`);
  console.log(
    `  configured for the load: ${Object.entries(LOAD_ENV)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')}`,
  );
  const sample = await SampleProcess.start({
    jwtSecret: secret,
    databaseUrl: db.url,
    dataDir: db.dataDir,
    tsNode: options.tsNode,
    env: LOAD_ENV,
    logFile: join(work, 'sample.log'),
  });
  const reports: ScenarioReport[] = [];
  let soakReport: SoakReport | null = null;
  let exit: Awaited<ReturnType<SampleProcess['stop']>>;
  try {
    console.log(`  the sample (pid ${sample.pid}) on ${sample.url}`);
    const chosen = allScenarios(sample.url, callers, options).filter((s) => !options.scenarios || options.scenarios.includes(s.key));
    for (const scenario of chosen) {
      console.log(`\n${scenario.name}`);
      reports.push(await runScenario(sample.url, scenario, options));
    }
    if (options.soakSeconds > 0) {
      console.log(`\nsoak: ${options.soakSeconds} s of mixed traffic at ${options.soakConnections} connections`);
      soakReport = await soak(sample, callers, options);
      console.log(`  ${soakReport.flat.verdict}`);
    }
  } finally {
    exit = await sample.stop();
  }
  let fuzzReport: RunOutcome['fuzzReport'] = null;
  if (options.fuzzRuns > 0) {
    console.log(`\nfuzz: test/fuzz.e2e-spec.ts, ZMODU_FUZZ_RUNS=${options.fuzzRuns}`);
    fuzzReport = await fuzz(options.fuzzRuns, db.serverUrl);
    console.log(`  ${fuzzReport.passed ? 'passed' : 'FAILED'}: ${fuzzReport.summary} (${fuzzReport.seconds.toFixed(0)} s)`);
  }
  return { reports, soakReport, fuzzReport, exit, warnings: sample.warnings };
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2), process.env);
  const keys = ['trader-run', 'analyst-run', 'approvals-list', 'approvals-decide', 'mcp-quote', 'mcp-db-query'];
  for (const key of options.scenarios ?? []) if (!keys.includes(key)) throw new Error(`unknown scenario ${key}\n${USAGE}`);
  const started = Date.now();
  const work = mkdtempSync(join(tmpdir(), 'zmodu-load-'));
  const secret = randomBytes(36).toString('base64');
  console.log(`zmodu load: node ${process.version}, ${cpus().length} cores, ${process.platform}/${process.arch}`);
  let database = '';
  const { reports, soakReport, fuzzReport, exit, warnings } = await withDatabase(options, work, (db) => {
    database = db.description;
    return loadRun(db, options, work, secret);
  });

  const failed = [
    ...reports.filter((r) => r.steps.some((s) => s.errors > 0)).map((r) => `${r.key}: errors`),
    ...(soakReport && soakReport.result.errors > 0 ? ['soak: errors'] : []),
    ...(soakReport && !soakReport.flat.flat ? ['soak: memory not flat'] : []),
    ...(fuzzReport && !fuzzReport.passed ? ['fuzz: failed'] : []),
    ...(exit.code !== 0 || exit.killed
      ? [`the sample's exit on SIGTERM: code ${exit.code}, signal ${exit.signal}${exit.killed ? ' (killed after 20 s)' : ''}`]
      : []),
  ];
  const markdown = report(reports, soakReport, fuzzReport, database, options);
  const results = {
    date: new Date().toISOString(),
    node: process.version,
    cores: cpus().length,
    database,
    sample: options.tsNode ? 'ts-node' : 'dist/apps/sample/main.js',
    options,
    configured: LOAD_ENV,
    scenarios: reports,
    soak: soakReport,
    fuzz: fuzzReport,
    sampleExit: exit,
    sampleWarnings: warnings.length,
    sampleWarningExamples: warnings.slice(0, 20),
    failed,
  };
  writeFileSync(join(ROOT, 'load-results.json'), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(join(ROOT, 'load-results.md'), `${markdown}\n`);
  if (soakReport) {
    mkdirSync(join(ROOT, 'docs', 'load'), { recursive: true });
    const r = soakReport.result;
    const svg = memoryChartSvg(soakReport.samples, {
      title: `The sample's memory in a ${soakReport.seconds} s soak (${database})`,
      subtitle: `${soakReport.flat.flat ? 'flat' : 'NOT flat'}: ${fmt(r.rps)} req/s of mixed traffic, ${soakReport.connections} connections, ${r.errors} errors; a sample every ${options.sampleSeconds} s after a full GC`,
    });
    writeFileSync(join(ROOT, 'docs', 'load', 'memory.svg'), svg);
  }
  console.log(`\n${markdown}\n`);
  console.log(`the sample logged ${warnings.length} line(s) at warn level or above${warnings.length ? '; the first:' : ''}`);
  for (const l of warnings.slice(0, 5)) console.log(`  ${logSummary(l)}`);
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  // The sample's log (its JSON lines at warn and above) is kept beside the results; the rest of the temporary folder goes.
  copyFileSync(join(work, 'sample.log'), join(ROOT, 'load-sample.log'));
  rmSync(work, { recursive: true, force: true });
  console.log(`wrote load-results.json, load-results.md${soakReport ? ', docs/load/memory.svg' : ''} in ${seconds} s`);
  if (failed.length) {
    console.log(`FAILED: ${failed.join('; ')} (the sample's log: load-sample.log)`);
    process.exitCode = 1;
  } else {
    console.log(`passed: zero errors${soakReport ? ', memory flat' : ''}${fuzzReport ? ', the fuzzers passed' : ''}`);
  }
}

/** A JSON log line without its request headers: level, context, message and error. */
function logSummary(line: string): string {
  try {
    const { level, context, msg, err, req } = JSON.parse(line) as Record<string, unknown>;
    const r = req as { method?: string; url?: string } | undefined;
    return JSON.stringify({ level, context, msg, err, req: r ? `${r.method} ${r.url}` : undefined }).slice(0, 600);
  } catch {
    return line.slice(0, 600);
  }
}

/** The ready-to-paste Markdown: the step table, the soak and the fuzzers. */
function report(
  reports: readonly ScenarioReport[],
  soakReport: SoakReport | null,
  fuzzReport: { runs: number; passed: boolean; summary: string } | null,
  database: string,
  options: LoadOptions,
): string {
  const parts = [
    `Load run of ${new Date().toISOString().slice(0, 10)}: node ${process.version}, ${cpus().length} cores, ${database}, ` +
      `${options.stepSeconds} s per step (after ${WARMUP_REQUESTS} warm-up requests), concurrency doubled from 1 until p99 >= 2x the first step's or ${options.maxConnections}.`,
    '',
    markdownTable(reports),
  ];
  const stops = reports.map((r) => `${r.name}: ${r.stoppedBecause}`);
  if (stops.length) parts.push('', ...stops.map((s) => `- ${s}`));
  if (soakReport) {
    const r = soakReport.result;
    const first = soakReport.samples[0];
    const last = soakReport.samples[soakReport.samples.length - 1];
    parts.push(
      '',
      renderTable(
        [
          ['Soak', 'Connections', 'Requests', 'req/s', 'p50 (ms)', 'p99 (ms)', 'Errors / non-2xx', 'Heap (MiB)', 'RSS (MiB)', 'Memory'],
          [
            `${soakReport.seconds} s mixed`,
            String(soakReport.connections),
            r.requests.toLocaleString('en-US'),
            fmt(r.rps),
            fmt(r.p50),
            fmt(r.p99),
            String(r.errors),
            `${mib(first.heapUsed)} -> ${mib(last.heapUsed)}`,
            `${mib(first.rss)} -> ${mib(last.rss)}`,
            soakReport.flat.flat ? 'flat' : 'NOT flat',
          ],
        ],
        [false, true, true, true, true, true, true, true, true, false],
      ),
      '',
      `Memory: ${soakReport.flat.verdict}. Rule: ${soakReport.rule}.`,
    );
  }
  if (fuzzReport)
    parts.push(
      '',
      `Fuzzers (test/fuzz.e2e-spec.ts, ZMODU_FUZZ_RUNS=${fuzzReport.runs}): ${fuzzReport.passed ? 'passed' : 'FAILED'} (${fuzzReport.summary}).`,
    );
  return parts.join('\n');
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
