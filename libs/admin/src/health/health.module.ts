import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { GoalQueueHealthIndicator } from './goal-queue.health';
import { OutboxHealthIndicator } from './outbox.health';

/**
 * The runtime's terminus health indicators, for your own health controller: `OutboxHealthIndicator` (the outbox
 * backlog) and `GoalQueueHealthIndicator` (the pg-boss goal queue in cluster mode). The database has terminus's own
 * `TypeOrmHealthIndicator`.
 */
@Module({
  imports: [TerminusModule],
  providers: [OutboxHealthIndicator, GoalQueueHealthIndicator],
  exports: [OutboxHealthIndicator, GoalQueueHealthIndicator],
})
export class ZmoduHealthModule {}
