/**
 * A child process for unhandled-rejection-net.spec.ts: holds the net (as a running PgBossGoalQueue does), leaves one
 * promise rejected and unhandled (argv[2]: `database`, a terminated connection; `bug`, a TypeError; `released`, a
 * terminated connection after the net was released), then prints the net's counts and exits 0 if it is still alive.
 */
import { holdUnhandledRejectionNet, unhandledRejectionCounts } from '../unhandled-rejection-net';

const kind = process.argv[2];
const release = holdUnhandledRejectionNet();
if (kind === 'released') release();
const rejected =
  kind === 'bug'
    ? new TypeError('boss.compelte is not a function')
    : Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
void Promise.reject(rejected);
setTimeout(() => {
  process.stdout.write(`COUNTS ${JSON.stringify(unhandledRejectionCounts())}\n`);
  release();
}, 300);
