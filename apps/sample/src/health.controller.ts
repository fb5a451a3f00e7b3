import { Controller, Get, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { SkipThrottle } from '@nestjs/throttler';
import type { Response } from 'express';
import { Public } from './auth/require-permission.decorator';

/** How long readiness waits for `SELECT 1` before it calls the database unavailable. */
const READY_TIMEOUT_MS = 1500;
/** What a client of a 503 is told to wait before it tries again. */
export const RETRY_AFTER_SECONDS = 5;

/**
 * Liveness (`GET /health`: the process answers) and readiness (`GET /health/ready`: the database
 * answers `SELECT 1` within 1.5 s; otherwise 503 with Retry-After, so an orchestrator stops routing
 * traffic here while the database is away).
 */
@ApiTags('health')
@Controller('health')
@SkipThrottle() // probes are not callers
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly db: TypeOrmHealthIndicator,
  ) {}

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
    return this.health.check([() => this.db.pingCheck('database', { timeout: READY_TIMEOUT_MS })]).then((result) => {
      res.removeHeader('Retry-After');
      return result;
    });
  }
}
