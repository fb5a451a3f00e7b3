'use strict';
/**
 * Preloaded into the sample by the load run (`node --expose-gc -r bench/load/memory-probe.js dist/apps/sample/main.js`,
 * started with an IPC channel): on { type: 'memory' } it runs a full GC when --expose-gc allows it and answers
 * { type: 'memory', gc, ...process.memoryUsage() }. Nothing of it is in the product; without an IPC channel it does nothing.
 */
if (typeof process.send === 'function') {
  process.on('message', (message) => {
    if (!message || message.type !== 'memory') return;
    const gc = typeof global.gc === 'function';
    if (gc) global.gc();
    process.send({ type: 'memory', gc, ...process.memoryUsage() });
  });
  // The channel must not keep the process alive: the sample exits on SIGTERM as it would without the probe.
  if (process.channel) process.channel.unref();
}
