import { AgentSpec, lastObservation, ModelProvider, ModelRequest, ScriptedModelProvider } from '@zmodu/agent';

/** The four job skills: two reads and two executes (schedule_job and cancel_job change what runs later). */
const SCHEDULER_SKILLS = ['list_schedulable_tasks', 'schedule_job', 'list_jobs', 'cancel_job'];

/**
 * The scheduler: schedules, lists and cancels the desk's jobs, and nothing else. Its guard opens the execute class
 * (schedule_job, cancel_job) because those are the point of the agent and its allow list holds only the job skills;
 * the token still needs job:schedule (job:read to list), and a job runs with the permissions of its creator, never
 * more. The trader keeps allowExecute off.
 */
export function schedulerAgent(provider?: ModelProvider): AgentSpec {
  return {
    name: 'scheduler',
    provider: provider ?? scriptedScheduler(),
    skills: [...SCHEDULER_SKILLS],
    guard: { allow: [...SCHEDULER_SKILLS], allowExecute: true },
    systemPrompt:
      'You manage the scheduled jobs of the desk. list_schedulable_tasks names the tasks you may schedule; schedule_job takes ' +
      'one of them by name, a 5-field cron and an IANA time zone; list_jobs and cancel_job (by job id) see this desk only. ' +
      'Say plainly when a call failed. Answer in one or two sentences.',
    maxSteps: 3,
  };
}

const goalOf = (req: ModelRequest) => (req.messages[0]?.role === 'user' ? req.messages[0].content : '');

/** What the goal asks: cancel a job (by id), list the jobs, schedule a task, or (else) list the tasks. */
function intent(req: ModelRequest): { name: string; arguments: Record<string, unknown> } {
  const goal = goalOf(req);
  const id = /\bcancel\b.*?\b((?:static:[a-z0-9-]+)|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})/i.exec(goal);
  if (id) return { name: 'cancel_job', arguments: { jobId: id[1] } };
  if (/\b(?:list|show)\b.*\bjobs\b/i.test(goal)) return { name: 'list_jobs', arguments: {} };
  if (/\bschedule\b/i.test(goal)) {
    const task = /\b([a-z]+(?:_[a-z]+)+)\b/.exec(goal)?.[1] ?? 'morning_summary';
    const cron = /"([^"]+)"/.exec(goal)?.[1] ?? '30 8 * * 1-5';
    const timeZone = /\b([A-Z][A-Za-z_]+\/[A-Z][A-Za-z_]+)\b/.exec(goal)?.[1] ?? 'America/New_York';
    return { name: 'schedule_job', arguments: { task, cron, timeZone } };
  }
  return { name: 'list_schedulable_tasks', arguments: {} };
}

/**
 * The offline scheduler: one job skill chosen from the goal ("Schedule morning_summary at \"30 8 * * 1-5\" in
 * Europe/London", "List the jobs", "Cancel job <id>"), then the outcome, failures said as failures.
 */
function scriptedScheduler(): ModelProvider {
  return new ScriptedModelProvider([
    (req) => {
      const call = intent(req);
      return { text: `Calling ${call.name}.`, toolCalls: [call] };
    },
    (req) => {
      const obs = lastObservation(req) as { error?: string; reason?: string; message?: string; jobId?: string; cancelled?: boolean };
      if (obs && typeof obs === 'object' && !Array.isArray(obs) && obs.error)
        return { text: `That failed: ${obs.reason ?? obs.error}${obs.message ? ` (${obs.message})` : ''}.` };
      if (obs?.jobId) return { text: `Scheduled job ${obs.jobId}.` };
      if (obs?.cancelled) return { text: 'The job is cancelled.' };
      return { text: `Here they are: ${JSON.stringify(obs)}.` };
    },
  ]);
}
