import { Module } from '@nestjs/common';
import { AgentRegistry } from './agent.registry';
import { ConfigurableAgentModule } from './agent.module-definition';

/**
 * Guarded agents for a Nest application.
 *
 * @example
 * AgentModule.forRoot({
 *   agents: [{ name: 'trader', provider, skills: ['market.quote', 'order.draft', 'order.submit'],
 *              guard: { allow: ['market.quote', 'order.draft', 'order.submit'], allowExecute: false } }],
 * })
 */
@Module({
  providers: [AgentRegistry],
  exports: [AgentRegistry],
})
export class AgentModule extends ConfigurableAgentModule {}
