import { checkStoreChoice, ownOptions } from '@zmodu/core';
import { resolveSkillPermissions } from '@zmodu/skills/internal';
import { InvalidJobsOptionsException } from '../exceptions/invalid-jobs-options.exception';
import { AgentJobStore } from './agent-job.ports';
import { InMemoryAgentJobStore } from './in-memory-agent-job.store';
import { AGENT_JOB_SKILL_NAMES, AgentJobSkills } from './agent-job-skills';
import { AgentJobsOptions, ResolvedAgentJobsOptions } from './agent-jobs.options';

const STORE_METHODS: readonly (keyof AgentJobStore)[] = [
  'upsert',
  'retireStatic',
  'get',
  'list',
  'active',
  'count',
  'create',
  'cancel',
  'claimTick',
  'claimCronTick',
  'setTickRun',
  'reclaimUnposted',
];
/** What AgentJobsModule tells the store resolver of @zmodu/core about its `store` (the provider adds the stores). */
export const JOB_STORE_CHOICE = {
  option: 'AgentJobsModule.forRoot({ store })',
  keeps: 'the scheduled jobs and their claimed ticks',
  invalid: (problem: string) => new InvalidJobsOptionsException('jobs.store', problem),
  memory: () => new InMemoryAgentJobStore(),
  methods: STORE_METHODS,
};

/** The sync reads every active job: not more often than once a second, at least once a day. */
const MIN_SYNC_MS = 1000;
const MAX_SYNC_MS = 86_400_000;

/** The jobs options with defaults merged once and every field checked (a boot error names the field). */
export function resolveJobsOptions(raw: AgentJobsOptions | undefined | null): ResolvedAgentJobsOptions {
  const jobs: unknown = raw ?? {};
  if (typeof jobs !== 'object' || Array.isArray(jobs))
    throw new InvalidJobsOptionsException('jobs', "expected an object such as { store: 'typeorm', schedulableTasks: [...] }");
  const merged = Object.assign(new AgentJobsOptions(), ownOptions(jobs as AgentJobsOptions)) as Record<string, unknown>;
  const store = merged.store;
  checkStoreChoice({ ...JOB_STORE_CHOICE, choice: store });
  const syncMs = merged.syncMs;
  if (typeof syncMs !== 'number' || !Number.isInteger(syncMs) || syncMs < MIN_SYNC_MS || syncMs > MAX_SYNC_MS)
    throw new InvalidJobsOptionsException(
      'jobs.syncMs',
      `expected an integer from ${MIN_SYNC_MS} to ${MAX_SYNC_MS} (milliseconds), got ${String(syncMs)}`,
    );
  if (!Array.isArray(merged.schedulableTasks))
    throw new InvalidJobsOptionsException('jobs.schedulableTasks', 'expected an array of { name, goal, agent?, description? }');
  const resolved: ResolvedAgentJobsOptions = {
    store: store as ResolvedAgentJobsOptions['store'],
    syncMs,
    schedulableTasks: [...(merged.schedulableTasks as ResolvedAgentJobsOptions['schedulableTasks'])],
    maxJobsPerTenant: merged.maxJobsPerTenant as number,
    maxJobLifetimeMs: merged.maxJobLifetimeMs as number,
    permissions: resolveSkillPermissions(merged.permissions, AGENT_JOB_SKILL_NAMES, 'jobs.permissions', (field, problem) => {
      throw new InvalidJobsOptionsException(field, problem);
    }),
  };
  try {
    // The skills check the tasks (names, goals, duplicates) and the cap; their TypeError names the field.
    new AgentJobSkills(null as unknown as AgentJobStore, resolved);
  } catch (e) {
    const message = (e as Error).message;
    const field = /^jobs\.(maxJobsPerTenant|maxJobLifetimeMs)\b/.exec(message)?.[0] ?? 'jobs.schedulableTasks';
    throw new InvalidJobsOptionsException(field, message.replace(/^jobs\.\w+:? ?/, ''));
  }
  return resolved;
}
