import { Controller, Get, Inject, Optional, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { SkipThrottle } from '@nestjs/throttler';
import { GoalQueueHealthIndicator, OutboxHealthIndicator } from '@zmodu/admin';
import { type OutboxHealthLimits, type ProbedGoalQueue } from '@zmodu/admin';
import { AGENT_GOAL_QUEUE } from '@zmodu/agent';
import type { Response } from 'express';
import { Public } from './auth/require-permission.decorator';
import { SAMPLE_OPTIONS, type SampleAppOptions } from './sample.options';

/** How long readiness waits for `SELECT 1` (and each other check) before it calls that part unavailable. */
const READY_TIMEOUT_MS = 1500;
/** What a client of a 503 is told to wait before it tries again. */
export const RETRY_AFTER_SECONDS = 5;

/**
 * The outbox check of readiness: degraded (still 200, with `degraded: true` and the reason) past 10,000 undelivered
 * events or an event undelivered for 15 minutes. Degraded, not down: the outbox is shared by every instance, and a
 * slow receiver must not take them all out of routing; alert on `zmodu_outbox_*` instead.
 */
export const SAMPLE_OUTBOX_HEALTH: OutboxHealthLimits = {
  maxBacklog: 10_000,
  maxOldestPendingMs: 15 * 60_000,
  whenExceeded: 'degraded',
  timeoutMs: READY_TIMEOUT_MS,
};

/**
 * Liveness (`GET /health`: the process answers) and readiness (`GET /health/ready`: the database answers `SELECT 1`
 * within 1.5 s, the outbox backlog is read (see SAMPLE_OUTBOX_HEALTH), and in cluster mode the pg-boss goal queue
 * answers; otherwise 503 with Retry-After, so an orchestrator stops routing traffic here while a part is away).
 */
@ApiTags('health')
@Controller('health')
@SkipThrottle() // probes are not callers
export class HealthController {
  private readonly outboxLimits: OutboxHealthLimits;

  constructor(
    private readonly health: HealthCheckService,
    private readonly db: TypeOrmHealthIndicator,
    private readonly outbox: OutboxHealthIndicator,
    private readonly queue: GoalQueueHealthIndicator,
    @Inject(SAMPLE_OPTIONS) options: SampleAppOptions,
    @Optional() @Inject(AGENT_GOAL_QUEUE) private readonly goals?: ProbedGoalQueue | null,
  ) {
    this.outboxLimits = { ...SAMPLE_OUTBOX_HEALTH, ...options.health?.outbox };
  }

  @Get()
  @Public()
  live() {
    return { status: 'ok' };
  }

  @Get('ready')
  @Public()
  @HealthCheck()
  ready(@Res({ passthrough: true }) res: Response) {
    // Set before the check: on failure HealthCheckService throws a 503 that carries no headers of its own.
    res.setHeader('Retry-After', String(RETRY_AFTER_SECONDS));
    const goals = this.goals;
    return this.health
      .check([
        () => this.db.pingCheck('database', { timeout: READY_TIMEOUT_MS }),
        () => this.outbox.isHealthy('outbox', this.outboxLimits),
        // Cluster mode only: the in-process queue has nothing to reach.
        ...(goals?.shared ? [() => this.queue.isHealthy('queue', goals, { timeoutMs: READY_TIMEOUT_MS })] : []),
      ])
      .then((result) => {
        res.removeHeader('Retry-After');
        return result;
      });
  }
}
