import { Module } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { CommandSkill } from './command.skill';
import { resolveStoreChoice } from '@zmodu/core';
import { OutboxRelay } from './outbox-relay';
import { RelayLifecycle } from './outbox-relay.lifecycle';
import { OUTBOX_OPTIONS, OUTBOX_STORE } from './outbox.constants';
import { ConfigurableOutboxModule, OUTBOX_MODULE_OPTIONS } from './outbox.module-definition';
import { OUTBOX_STORE_CHOICE, OutboxModuleOptions, resolveOutboxOptions, ResolvedOutboxOptions } from './outbox.options';
import { OutboxService } from './outbox.service';
import { OutboxStore } from './outbox.store';
import { TypeOrmOutboxStore } from './typeorm-outbox.store';

/**
 * The transactional outbox: command.execute (when commands are given), OutboxService, and an
 * OutboxRelay that delivers events to their handlers at least once, with retries, backoff,
 * dead-lettering and fencing; several app instances can relay at once. Storage goes through the
 * OUTBOX_STORE port (TypeOrmOutboxStore by default). `forRoot(options)` or `forRootAsync({ useFactory, inject })`;
 * global unless `isGlobal: false`.
 */
@Module({
  providers: [
    { provide: OUTBOX_OPTIONS, inject: [OUTBOX_MODULE_OPTIONS], useFactory: (raw: OutboxModuleOptions) => resolveOutboxOptions(raw) },
    {
      provide: OUTBOX_STORE,
      inject: [OUTBOX_OPTIONS, { token: getDataSourceToken(), optional: true }],
      useFactory: (o: ResolvedOutboxOptions, ds?: DataSource): OutboxStore =>
        resolveStoreChoice<OutboxStore, DataSource>({
          ...OUTBOX_STORE_CHOICE,
          choice: o.store,
          dataSource: ds,
          typeorm: (dataSource) => new TypeOrmOutboxStore(dataSource),
        }),
    },
    {
      provide: OutboxService,
      inject: [OUTBOX_OPTIONS, OUTBOX_STORE],
      useFactory: (o: ResolvedOutboxOptions, store: OutboxStore) => new OutboxService(store, o.maxAttempts),
    },
    {
      provide: OutboxRelay,
      inject: [OUTBOX_OPTIONS, OUTBOX_STORE],
      useFactory: (o: ResolvedOutboxOptions, store: OutboxStore) => new OutboxRelay(store, o.relay),
    },
    CommandSkill,
    RelayLifecycle,
  ],
  exports: [OutboxService, OutboxRelay, OUTBOX_STORE],
})
export class OutboxModule extends ConfigurableOutboxModule {}
