import { Module } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { resolveStoreChoice } from '@zmodu/core';
import { InMemoryMemoryStore } from './in-memory-memory.store';
import { MEMORY_OPTIONS, MEMORY_STORE } from './memory.constants';
import { ConfigurableMemoryModule, MEMORY_MODULE_OPTIONS } from './memory.module-definition';
import { MEMORY_STORE_CHOICE, MemoryModuleOptions, resolveMemoryOptions, ResolvedMemoryOptions } from './memory.options';
import { MemoryRecall } from './memory-recall';
import { MemorySkills } from './memory.skills';
import { MemoryStore } from './memory.store';
import { TypeOrmMemoryStore } from './typeorm-memory.store';

/**
 * Agent memory scoped to a tenant and a user: the MEMORY_STORE (TypeOrmMemoryStore on the app's
 * DataSource by default, 'memory' or yours), MemoryRecall (an agent's `memory`), and the memory.remember / memory.recall
 * skills. `forRoot(options)` or `forRootAsync({ useFactory, inject })`; global unless `isGlobal: false`.
 */
@Module({
  providers: [
    { provide: MEMORY_OPTIONS, inject: [MEMORY_MODULE_OPTIONS], useFactory: (raw: MemoryModuleOptions) => resolveMemoryOptions(raw) },
    {
      provide: MEMORY_STORE,
      inject: [MEMORY_OPTIONS, { token: getDataSourceToken(), optional: true }],
      useFactory: (o: ResolvedMemoryOptions, ds?: DataSource): MemoryStore =>
        resolveStoreChoice<MemoryStore, DataSource>({
          ...MEMORY_STORE_CHOICE,
          choice: o.store,
          dataSource: ds,
          typeorm: (dataSource) => new TypeOrmMemoryStore(dataSource, o.ranker, { maxNotesPerUser: o.maxNotesPerUser }),
          memory: () => new InMemoryMemoryStore({ maxNotesPerUser: o.maxNotesPerUser }),
        }),
    },
    MemoryRecall,
    MemorySkills,
  ],
  exports: [MEMORY_STORE, MemoryRecall],
})
export class MemoryModule extends ConfigurableMemoryModule {}
