import { AgentSpec } from './agent-definition';

export class AgentModuleOptions {
  /** The agents of the application. */
  agents: AgentSpec[] = [];
  /** Make a policy that needs attention (inert, blind spot, unknown names) a boot error instead of a warning. */
  strictPolicies?: boolean = false;
}
