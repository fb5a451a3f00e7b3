// Runs in each test file's sandbox (setupFilesAfterEnv): Nest's ConsoleLogger hands its output to
// the quiet environment (test/support/quiet-environment.js) instead of writing it at once.
// ZMODU_TEST_LOGS=1 prints everything as it happens.
if (process.env.ZMODU_TEST_LOGS !== '1') {
  const { ConsoleLogger } = require('@nestjs/common');
  for (const method of ['printMessages', 'printStackTrace']) {
    const original = ConsoleLogger.prototype[method];
    ConsoleLogger.prototype[method] = function held(...args) {
      const held = globalThis.__zmoduHeldLogs;
      if (!held) return original.apply(this, args);
      held.push(() => original.apply(this, args));
    };
  }
}
