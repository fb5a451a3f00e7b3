import { checkStoreChoice, ownOptions } from '@zmodu/core';
import { InvalidWorkerOptionsException } from '../exceptions/invalid-worker-options.exception';
import { AgentWorkerOptions, ResolvedAgentWorkerOptions } from './agent-worker.options';
import { InMemoryAgentRunStore } from './in-memory-agent-run.store';
import { AgentRunStore, MAX_RUN_ATTEMPTS } from './worker.ports';

const STORE_METHODS: readonly (keyof AgentRunStore)[] = [
  'insert',
  'get',
  'claim',
  'heartbeat',
  'finish',
  'release',
  'recoverable',
  'mailbox',
];

/** What AgentWorkerModule tells the store resolver of @zmodu/core about its `runStore` (the provider adds the stores). */
export const RUN_STORE_CHOICE = {
  option: 'AgentWorkerModule.forRoot({ runStore })',
  keeps: 'the runs and their leases',
  methods: STORE_METHODS,
  memory: () => new InMemoryAgentRunStore(),
  invalid: (problem: string) => new InvalidWorkerOptionsException('worker.runStore', problem),
};

function int(options: Record<string, unknown>, field: string, min: number, max: number): number {
  const value = options[field];
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    throw new InvalidWorkerOptionsException(`worker.${field}`, `expected an integer from ${min} to ${max}, got ${String(value)}`);
  return value;
}

/** The worker options with defaults merged once and every field checked (a boot error names the field). */
export function resolveWorkerOptions(raw: AgentWorkerOptions | undefined | null): ResolvedAgentWorkerOptions {
  if (raw === undefined || raw === null) raw = {};
  if (typeof raw !== 'object' || Array.isArray(raw))
    throw new InvalidWorkerOptionsException('worker', "expected an object such as { concurrency: 4, runStore: 'typeorm' }");
  const merged = Object.assign(new AgentWorkerOptions(), ownOptions(raw)) as Record<string, unknown>;
  const leaseMs = int(merged, 'leaseMs', 100, 3_600_000);
  if (merged.heartbeatMs === undefined) merged.heartbeatMs = Math.max(10, Math.floor(leaseMs / 3));
  const mailboxSize = int(merged, 'mailboxSize', 1, 1_000_000);
  if (merged.mailboxPerTenant === undefined) merged.mailboxPerTenant = Math.ceil(mailboxSize / 4);
  const runStore = merged.runStore;
  checkStoreChoice({ ...RUN_STORE_CHOICE, choice: runStore });
  if (merged.onResult !== undefined && typeof merged.onResult !== 'function')
    throw new InvalidWorkerOptionsException('worker.onResult', 'expected a function (result) => void');
  return {
    concurrency: int(merged, 'concurrency', 1, 1000),
    mailboxSize,
    mailboxPerTenant: int(merged, 'mailboxPerTenant', 1, mailboxSize),
    leaseMs,
    heartbeatMs: int(merged, 'heartbeatMs', 10, leaseMs - 1),
    shutdownGraceMs: int(merged, 'shutdownGraceMs', 0, 600_000),
    maxAttempts: int(merged, 'maxAttempts', 1, MAX_RUN_ATTEMPTS),
    maxGoalLength: int(merged, 'maxGoalLength', 1, 1_000_000),
    maxWaitingPerTenant: int(merged, 'maxWaitingPerTenant', 1, 1_000_000),
    runStore: runStore as ResolvedAgentWorkerOptions['runStore'],
    onResult: merged.onResult as AgentWorkerOptions['onResult'],
  };
}
