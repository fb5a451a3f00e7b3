import { Module } from '@nestjs/common';
import type * as Terminus from '@nestjs/terminus';
import { loadOptionalPeer } from '@zmodu/core';
import { OUTBOX_STORE } from '@zmodu/outbox/internal';
import { OutboxStore } from '@zmodu/outbox';
import { GoalQueueHealthIndicator } from './goal-queue.health';
import type { HealthIndicatorService } from './health-indicator.types';
import { OutboxHealthIndicator } from './outbox.health';

/**
 * @nestjs/terminus (an optional peer of @zmodu/admin), loaded when ZmoduHealthModule builds its indicators (at boot),
 * so that an application without health checks need not install it. Only its types are imported at the top.
 */
function healthIndicatorService(): HealthIndicatorService {
  const terminus = loadOptionalPeer(
    '@nestjs/terminus',
    'the health indicators (ZmoduHealthModule)',
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    () => require('@nestjs/terminus') as typeof Terminus,
    { install: '@nestjs/terminus@^12' },
  );
  // Stateless, with no dependencies: what TerminusModule provides, built here so that this module need not import it.
  return new terminus.HealthIndicatorService();
}

/**
 * The runtime's terminus health indicators, for your own health controller: `OutboxHealthIndicator` (the outbox
 * backlog) and `GoalQueueHealthIndicator` (the pg-boss goal queue in cluster mode). The database has terminus's own
 * `TypeOrmHealthIndicator`. Needs @nestjs/terminus (the boot fails naming it when it is not installed).
 */
@Module({
  providers: [
    {
      provide: OutboxHealthIndicator,
      inject: [{ token: OUTBOX_STORE, optional: true }],
      useFactory: (store?: OutboxStore) => new OutboxHealthIndicator(healthIndicatorService(), store),
    },
    { provide: GoalQueueHealthIndicator, useFactory: () => new GoalQueueHealthIndicator(healthIndicatorService()) },
  ],
  exports: [OutboxHealthIndicator, GoalQueueHealthIndicator],
})
export class ZmoduHealthModule {}
