import { Inject, Injectable } from '@nestjs/common';
import { InjectMemoryStore, MEMORY_OPTIONS } from './memory.constants';
import { memoryBlock } from './memory-block';
import { ResolvedMemoryOptions } from './memory.options';
import { MemoryStore } from './memory.store';
import { MemoryEntry, MemoryScope } from './memory.types';

/**
 * What an agent recalls: the user's entries for a goal within MemoryModule's caps, and the fenced
 * block for its system prompt. It is an `AgentMemory` of @zmodu/agent: give it as an agent spec's `memory`.
 */
@Injectable()
export class MemoryRecall {
  constructor(
    @InjectMemoryStore() private readonly store: MemoryStore,
    @Inject(MEMORY_OPTIONS) private readonly options: ResolvedMemoryOptions,
  ) {}

  /** The scope's entries for the goal (none for a scope without tenant or user). */
  recall(scope: MemoryScope, goal: string, maxEntries = this.options.maxEntries): Promise<MemoryEntry[]> {
    return this.store.recall(scope, goal, { maxEntries: Math.min(maxEntries, this.options.maxEntries), maxChars: this.options.maxChars });
  }

  /** The fenced block of remembered notes for the system prompt, or '' when nothing is recalled. */
  async recallBlock(scope: MemoryScope, goal: string): Promise<string> {
    return memoryBlock(await this.recall(scope, goal));
  }
}
