// The Node test environment, with Nest's console logger held back per test: what a test logs on
// purpose (an error it provokes, a warning it expects) is printed only when that test fails, or
// when a hook fails. Passing suites stay quiet; a failure still shows every log line that led to it.
const { TestEnvironment } = require('jest-environment-node');

class QuietEnvironment extends TestEnvironment {
  async setup() {
    await super.setup();
    this.global.__zmoduHeldLogs = [];
  }

  flush() {
    const held = this.global.__zmoduHeldLogs ?? [];
    this.global.__zmoduHeldLogs = [];
    for (const print of held) print();
  }

  drop() {
    if (this.global.__zmoduHeldLogs) this.global.__zmoduHeldLogs.length = 0;
  }

  async handleTestEvent(event) {
    if (event.name === 'test_start') this.drop();
    else if (event.name === 'test_done') {
      if (event.test.errors.length > 0) this.flush();
      else this.drop();
    } else if (event.name === 'hook_failure') this.flush();
  }
}

module.exports = QuietEnvironment;
