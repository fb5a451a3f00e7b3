import { Inject, Injectable, Optional } from '@nestjs/common';
import { Redactor } from '@zmodu/guard';
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
    @Optional() @Inject(Redactor) private readonly redactor?: Redactor,
  ) {}

  /** The scope's entries for the goal (none for a scope without tenant or user), redacted by the guard's Redactor. */
  async recall(scope: MemoryScope, goal: string, maxEntries = this.options.maxEntries): Promise<MemoryEntry[]> {
    const entries = await this.store.recall(scope, goal, {
      maxEntries: Math.min(maxEntries, this.options.maxEntries),
      maxChars: this.options.maxChars,
    });
    // A note can hold what a user typed (a key, a card number): redacted, like a tool result, before a model reads it.
    const redactor = this.redactor;
    return redactor ? entries.map((e) => ({ ...e, content: redactor.redactText(e.content) })) : entries;
  }

  /** The fenced block of remembered notes for the system prompt, or '' when nothing is recalled. */
  async recallBlock(scope: MemoryScope, goal: string): Promise<string> {
    return memoryBlock(await this.recall(scope, goal));
  }
}
