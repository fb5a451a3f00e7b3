import { Reflector } from '@nestjs/core';
import { AGENT_JOB_METADATA, AgentJob, AgentJobDefinition, staticAgentJob } from './agent-job.decorator';

const ok: AgentJobDefinition = {
  name: 'nightly',
  agent: 'reporter',
  cron: '0 2 * * *',
  timeZone: 'Europe/Paris',
  goal: 'compile the nightly report',
  tenantId: 't1',
  userId: 'system',
  permissions: ['reports:write'],
  missed: 'catch_up',
};

describe('@AgentJob', () => {
  it('stores its definition as metadata on a class and on a method', () => {
    @AgentJob(ok)
    class Jobs {
      @AgentJob({ ...ok, name: 'hourly', cron: '0 * * * *' })
      hourly() {}
    }
    const reflector = new Reflector();
    expect(reflector.get(AGENT_JOB_METADATA, Jobs)).toMatchObject({ name: 'nightly' });
    expect(reflector.get(AGENT_JOB_METADATA, Jobs.prototype.hourly)).toMatchObject({ name: 'hourly', cron: '0 * * * *' });
    expect(staticAgentJob(ok)).toMatchObject({ id: 'static:nightly', origin: 'static', missed: 'catch_up', agent: 'reporter' });
  });

  it.each([
    [{ cron: '*/5 * * * * *' }, 'more than once a minute'],
    [{ cron: 'every day' }, 'fields'],
    [{ timeZone: 'Atlantis/Capital' }, 'time zone'],
    [{ tenantId: '' }, 'tenantId is required'],
    [{ userId: undefined }, 'userId is required'],
    [{ permissions: 'all' }, 'permissions must be an array'],
    [{ goal: ' ' }, 'goal is required'],
    [{ missed: 'always' }, "missed must be 'skip' or 'catch_up'"],
    [{ name: '' }, 'name is required'],
  ])('fails when applied with %j (%s)', (over, message) => {
    expect(() => AgentJob({ ...ok, ...over } as unknown as AgentJobDefinition)).toThrow(message);
  });
});
