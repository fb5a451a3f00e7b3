import { Inject, Injectable, Logger, OnApplicationBootstrap, Optional } from '@nestjs/common';
import { ownOptions } from '@zmodu/core';
import { PolicyHealth, Redactor, RuntimeEvents, TokenQuota } from '@zmodu/guard';
import { policyNeedsAttention } from '@zmodu/guard/internal';
import { SkillDispatcher, SkillRegistry } from '@zmodu/skills';
import { Agent } from './agent';
import { AgentModuleOptions } from './agent-module.options';
import { AGENT_MODULE_OPTIONS } from './agent.module-definition';
import { DUPLICATE_AGENT_MESSAGE, MOVED_OPTION_MESSAGE, POLICY_WARNING_MESSAGE } from './agent.messages';
import { AgentNotFoundException } from './exceptions/agent-not-found.exception';
import { InvalidAgentSpecException } from './exceptions/invalid-agent-spec.exception';
import { PolicyHealthException } from './exceptions/policy-health.exception';
import { validateAgentSpec } from './validate-agent-definition';

/** AgentModule options that became modules of their own, and where they went. */
const MOVED_OPTIONS: ReadonlyMap<string, string> = new Map([
  ['worker', 'AgentWorkerModule.forRoot({ ...worker })'],
  ['queue', 'AgentWorkerModule.forRoot({ queue })'],
  ['jobs', 'AgentJobsModule.forRoot({ ...jobs })'],
]);

/** The application's agents, built from their specs; the policy of each is audited at boot. */
@Injectable()
export class AgentRegistry implements OnApplicationBootstrap {
  private readonly logger = new Logger('AgentRegistry');
  private readonly agents = new Map<string, Agent>();
  private readonly strict: boolean;

  constructor(
    @Inject(AGENT_MODULE_OPTIONS) raw: AgentModuleOptions,
    registry: SkillRegistry,
    dispatcher: SkillDispatcher,
    private readonly quota: TokenQuota,
    @Optional() events?: RuntimeEvents,
    /** GuardModule's: the agents register their providers' keys with it, and redact what their runs show. */
    @Optional() redactor?: Redactor,
  ) {
    const options = Object.assign(new AgentModuleOptions(), ownOptions(raw));
    // The worker and the jobs are modules of their own: an option left here from before would be dropped without a word.
    for (const [key, moved] of MOVED_OPTIONS)
      if (raw !== null && typeof raw === 'object' && Object.hasOwn(raw, key))
        throw new InvalidAgentSpecException(undefined, MOVED_OPTION_MESSAGE(key, moved));
    if (!Array.isArray(options.agents)) throw new InvalidAgentSpecException(undefined, 'AgentModule options need agents: AgentSpec[]');
    this.strict = options.strictPolicies === true;
    for (const spec of options.agents) {
      validateAgentSpec(spec);
      if (this.agents.has(spec.name)) throw new InvalidAgentSpecException(spec.name, DUPLICATE_AGENT_MESSAGE(spec.name));
      this.agents.set(spec.name, new Agent(spec, registry, dispatcher, quota, events, redactor));
    }
  }

  /** After every @Skill is registered: audit each policy and apply quota limits. */
  onApplicationBootstrap(): void {
    for (const agent of this.agents.values()) {
      this.quota.setAgentLimit(agent.name, agent.spec.budget?.tokensPerPeriod);
      const budget = agent.spec.budget;
      if (budget?.userShare !== undefined || budget?.tokensPerUserPerPeriod !== undefined)
        this.quota.setAgentUserShare(agent.name, { userShare: budget.userShare, userLimit: budget.tokensPerUserPerPeriod });
      const health = agent.auditPolicy();
      if (!policyNeedsAttention(health)) continue;
      const message = POLICY_WARNING_MESSAGE(agent.name, describe(health));
      if (this.strict) throw new PolicyHealthException(message.replace(/ Set strictPolicies.*$/, ''));
      this.logger.warn(message);
    }
  }

  get(name: string): Agent {
    const agent = this.agents.get(name);
    if (!agent) throw new AgentNotFoundException(name, [...this.agents.keys()]);
    return agent;
  }

  has(name: string): boolean {
    return this.agents.has(name);
  }

  list(): Agent[] {
    return [...this.agents.values()];
  }
}

function describe(h: PolicyHealth): string {
  const parts: string[] = [];
  if (h.inert) parts.push('the policy is inert (it lets no name through)');
  if (h.hasClassBlindSpot)
    parts.push(
      `execute-class skills are allowed by name but refused by class while allowExecute is false: ${h.classDeniedTools.join(', ')}`,
    );
  if (h.unknownTools.length) parts.push(`unknown skill names: ${h.unknownTools.join(', ')}`);
  if (h.adminByFilter.length)
    parts.push(
      `admin skills included by a filter, not by name (an admin skill is reachable only when guard.allow names it): ${h.adminByFilter.join(', ')}`,
    );
  return parts.join('; ');
}
