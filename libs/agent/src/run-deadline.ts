import { StopReason } from './agent-run';

/** One signal for a run: aborted by the caller's signal or at the deadline, whichever comes first. */
export interface RunDeadline {
  readonly signal: AbortSignal;
  /** Why the run stops now that the signal aborted: `timed_out` at the deadline, else `aborted`, with the error text. */
  stop(): [StopReason, string];
  /** Clear the timer and let go of the caller's signal. */
  dispose(): void;
}

export function runDeadline(callerSignal: AbortSignal | undefined, timeoutMs: number): RunDeadline {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new DOMException(`the run passed its deadline of ${timeoutMs} ms`, 'TimeoutError'));
  }, timeoutMs);
  timer.unref?.();
  const onAbort = () => controller.abort(callerSignal?.reason);
  if (callerSignal?.aborted) onAbort();
  else callerSignal?.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    stop: () =>
      timedOut
        ? ['timed_out', `the run passed its deadline of ${timeoutMs} ms; the request in flight was aborted`]
        : ['aborted', 'the run was aborted'],
    dispose: () => {
      clearTimeout(timer);
      callerSignal?.removeEventListener('abort', onAbort);
    },
  };
}
