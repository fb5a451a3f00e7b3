import 'reflect-metadata';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { runAgentLoopBench } from './agent-loop.bench';
import { runRunJournalBench } from './run-journal.bench';
import { runRunResumeBench } from './run-resume.bench';
import { runAuditChainBench } from './audit-chain.bench';
import { runClusterBench } from './cluster.bench';
import { postgresServer } from './bench-database';
import { runDbQueryBench } from './db-query.bench';
import { runPipelineBench } from './pipeline.bench';
import { runProviderLoopBench } from './provider-loop.bench';
import { runRelayBench } from './relay.bench';
import { runGuardBench } from './guard.bench';
import { runHostileInputBench } from './hostile-input.bench';
import { runMcpBench } from './mcp.bench';
import { runMemoryBench } from './memory.bench';
import { runWorkerBench } from './worker.bench';
import { checksum } from './measure';
import { formatTable, Row, writeResults } from './report';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { recordBench } = require('../scripts/generated-docs.js') as {
  recordBench(rows: readonly Row[], options: { run: Record<string, unknown> }): string;
};

/**
 * `npm run bench`: the guard's decision cost against a Set lookup and casbin, the redactor and a schema pattern on
 * hostile input against ordinary input, the agent
 * loop against the Vercel AI SDK (in memory, and over the OpenAI provider against a local server), MCP
 * tools/call through McpModule against the raw MCP SDK server, db.query against pg on the same final SQL, the proposal
 * pipeline against one committed INSERT, the outbox relay against pg-boss, the AgentWorker against p-queue, memory recall among
 * 100,000 entries against a table of one user's and a point lookup, cluster mode against pg-boss's send/work, and dispatches with the
 * chained audit against the unchained one, in one run.
 * Prints a table and writes bench-results.json. Missed targets are reported (MISS), never turned into a failing exit code; only a crash is.
 */
async function main(): Promise<void> {
  const started = process.hrtime.bigint();
  const loadAtStart = Math.round(loadavg()[0] * 100) / 100;
  const log = (line: string) => console.log(`  ${line}`);
  console.log(`zmodu bench: node ${process.version}, ${process.platform}/${process.arch}`);

  // `npm run bench -- --only mcp,guard`: only those rows (the names below); default every row.
  const only = onlyRows(process.argv.slice(2));
  const record = process.argv.includes('--record');
  const wanted = (name: BenchName) => only === null || only.has(name);
  const rows: Row[] = [];
  if (wanted('guard')) rows.push(...(await runGuardBench(log)).rows);
  if (wanted('hostile-input')) rows.push(...(await runHostileInputBench(log)).rows);
  if (wanted('agent-loop')) rows.push(...(await runAgentLoopBench(log)).rows);
  if (wanted('provider-loop')) rows.push(...(await runProviderLoopBench(log)).rows);
  if (wanted('mcp')) rows.push(...(await runMcpBench(log)).rows);
  if (wanted('worker')) rows.push(...(await runWorkerBench(log)).rows);
  const needsServer = DATABASE_BENCHES.some(wanted);
  const server = needsServer ? await postgresServer(log) : null;
  try {
    if (wanted('db-query')) rows.push(...(await runDbQueryBench(log, server)).rows);
    if (wanted('pipeline')) rows.push(...(await runPipelineBench(log, server)).rows);
    if (wanted('run-journal')) rows.push(...(await runRunJournalBench(log, server)).rows);
    if (wanted('run-resume')) rows.push(...(await runRunResumeBench(log, server)).rows);
    if (wanted('audit-chain')) rows.push(...(await runAuditChainBench(log, server)).rows);
    if (wanted('relay')) rows.push(...(await runRelayBench(log, server)).rows);
    if (wanted('memory')) rows.push(...(await runMemoryBench(log, server)).rows);
    if (wanted('cluster')) rows.push(...(await runClusterBench(log, server)).rows);
  } finally {
    server?.stop();
  }

  const out = resolve(__dirname, '..', 'bench-results.json');
  writeResults(out, rows);
  // --record: the rows go to docs/generated/benchmarks.md, dated, with this machine (the only way figures reach the docs).
  const page = record ? recordBench(rows, { run: { load1: loadAtStart, ...(only ? { only: [...only].join(',') } : {}) } }) : null;
  console.log('');
  console.log(formatTable(rows));
  console.log('');
  const missed = rows.filter((r) => !r.target.met).length;
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  console.log(
    `${rows.length - missed}/${rows.length} targets met; wrote ${out}${page ? ` and ${page}` : ''} in ${seconds.toFixed(1)} s (checksum ${checksum()})`,
  );
}

const DATABASE_BENCHES = ['db-query', 'pipeline', 'run-journal', 'run-resume', 'audit-chain', 'relay', 'memory', 'cluster'] as const;
const BENCHES = ['guard', 'hostile-input', 'agent-loop', 'provider-loop', 'mcp', 'worker', ...DATABASE_BENCHES] as const;
type BenchName = (typeof BENCHES)[number];

/** The rows `--only a,b` names (null: every row); an unknown name ends the run saying which names there are. */
function onlyRows(argv: readonly string[]): ReadonlySet<BenchName> | null {
  const at = argv.findIndex((a) => a === '--only' || a.startsWith('--only='));
  if (at < 0) return null;
  const value = argv[at].startsWith('--only=') ? argv[at].slice('--only='.length) : (argv[at + 1] ?? '');
  const names = value.split(',').filter(Boolean);
  const unknown = names.filter((n) => !(BENCHES as readonly string[]).includes(n));
  if (names.length === 0 || unknown.length)
    throw new Error(`--only takes a comma-separated list of ${BENCHES.join(', ')} (got ${JSON.stringify(value)})`);
  return new Set(names as BenchName[]);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
