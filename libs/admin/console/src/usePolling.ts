import { useEffect, useRef, useState } from 'preact/hooks';

/** Calls `tick` now and every `ms` (not while the previous call runs); stops on unmount. */
export function usePolling(tick: () => Promise<void>, ms: number, deps: unknown[]): void {
  const latest = useRef(tick);
  latest.current = tick;
  useEffect(() => {
    let stopped = false;
    let timer: number | undefined;
    const run = async () => {
      try {
        await latest.current();
      } finally {
        if (!stopped) timer = window.setTimeout(run, Math.max(500, ms));
      }
    };
    void run();
    return () => {
      stopped = true;
      window.clearTimeout(timer);
    };
  }, [ms, ...deps]);
}

/** The current time, updated every `ms`: for the time left before expiry. */
export function useNow(ms = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = window.setInterval(() => setNow(Date.now()), ms);
    return () => window.clearInterval(t);
  }, [ms]);
  return now;
}
