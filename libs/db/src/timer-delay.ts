/** A deadline as a timer delay: at least 1 ms, and within what a Node timer holds (a longer one fires at once). */
export function timerDelay(ms: number): number {
  return Math.min(Math.max(1, Math.floor(Number.isFinite(ms) ? ms : 2 ** 31 - 1)), 2 ** 31 - 1);
}
