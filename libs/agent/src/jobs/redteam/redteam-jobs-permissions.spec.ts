import { InMemoryAgentJobStore } from '../in-memory-agent-job.store';
import { AgentJobSkills } from '../agent-job-skills';

const tasks = [{ name: 'summary', goal: 'summarize the day' }];

describe('red team: jobs.permissions (issue 13)', () => {
  it('RJ-4: a code on the prototype (a class getter) fails at boot instead of leaving cancel_job open to everyone', () => {
    class JobPermissions {
      get cancel_job(): string {
        return 'job:cancel';
      }
    }
    expect(() => new AgentJobSkills(new InMemoryAgentJobStore(), { schedulableTasks: tasks, permissions: new JobPermissions() })).toThrow(
      'jobs.permissions.cancel_job',
    );
    const defaults = { schedule_job: 'job:schedule' };
    expect(
      () => new AgentJobSkills(new InMemoryAgentJobStore(), { schedulableTasks: tasks, permissions: Object.create(defaults) as object }),
    ).toThrow('inherited');
  });

  it('own codes, and a prototype-less object, are taken', () => {
    const own = Object.assign(Object.create(null) as object, { cancel_job: 'job:cancel' });
    expect(() => new AgentJobSkills(new InMemoryAgentJobStore(), { schedulableTasks: tasks, permissions: own })).not.toThrow();
    expect(
      () => new AgentJobSkills(new InMemoryAgentJobStore(), { schedulableTasks: tasks, permissions: { list_jobs: 'job:read' } }),
    ).not.toThrow();
  });
});
