import { Injectable } from '@nestjs/common';
import type { HealthIndicatorResult, HealthIndicatorService } from './health-indicator.types';
import { withTimeout } from './outbox.health';

/**
 * What the queue indicator needs of an agent goal queue (the `GoalQueue` of @zmodu/agent, injected with its
 * AGENT_GOAL_QUEUE token): whether other instances share it, and a probe that reaches its backend.
 */
export interface ProbedGoalQueue {
  readonly shared?: boolean;
  probe?(): Promise<Record<string, unknown> | void>;
  /** Every goal queue has it (what makes an object one); the indicator does not call it. */
  stop(graceMs: number): Promise<void>;
}

/**
 * A terminus health indicator of the agent goal queue in cluster mode (pg-boss): up when its probe answers in time
 * (with what it tells, e.g. `queued`), down when it fails or does not answer. A queue with nothing to reach (the
 * in-process one, or none: no worker) is up. Never throws: a failure is a `down` result.
 */
@Injectable()
export class GoalQueueHealthIndicator {
  constructor(private readonly health: HealthIndicatorService) {}

  async isHealthy<const Key extends string>(
    key: Key,
    queue: ProbedGoalQueue | null | undefined,
    options: { readonly timeoutMs?: number } = {},
  ): Promise<HealthIndicatorResult<Key>> {
    const indicator = this.health.check(key);
    if (!queue) return indicator.up({ queue: 'none' });
    if (typeof queue.probe !== 'function')
      return queue.shared ? indicator.down({ message: 'the shared goal queue has no probe' }) : indicator.up({ queue: 'in-process' });
    try {
      const details = await withTimeout(
        Promise.resolve().then(() => queue.probe?.()),
        options.timeoutMs ?? 1500,
      );
      return indicator.up({ queue: 'shared', ...(details ?? {}) });
    } catch (err) {
      return indicator.down({ queue: 'shared', message: `the goal queue is unreachable: ${(err as Error)?.message ?? String(err)}` });
    }
  }
}
