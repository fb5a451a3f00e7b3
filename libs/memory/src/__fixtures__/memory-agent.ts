import { AgentModule, ModelProvider } from '@zmodu/agent';
import type { GuardModuleOptions } from '@zmodu/guard';
import { MemoryRecall } from '../memory-recall';

/** AgentModule with one agent, `helper`: the two memory skills (execute off) and the user's memory in its prompt. */
export function memoryAgentModule(provider: ModelProvider, guard: GuardModuleOptions, systemPrompt?: string) {
  return AgentModule.forRootAsync({
    inject: [MemoryRecall],
    useFactory: (memory: MemoryRecall) => ({
      agents: [
        {
          name: 'helper',
          provider,
          skills: ['memory.remember', 'memory.recall'],
          guard: { allow: ['memory.remember', 'memory.recall'], allowExecute: false },
          ...(systemPrompt ? { systemPrompt } : {}),
          memory,
        },
      ],
    }),
    guard,
  });
}
