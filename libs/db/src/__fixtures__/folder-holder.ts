// A process of its own on an embedded database folder, for the specs of the folder lock (run with ts-node). It prints one
// JSON line per event on stdout and takes commands, one a line, on stdin.
//   open DIR NOTE   open the folder, add NOTE to table notes, print {"opened":pid}; "close" closes it, prints {"closed":true};
//                   "exit" ends the process without closing it
//   race DIR OSLOCK take only the folder's lock (OSLOCK 0: the lock file alone) when "go" comes: {"won":true} or
//                   {"refused":message}; holds it until stdin ends
// A refused open prints {"refused":message,"name":...} and exits 3.
import { createInterface } from 'node:readline';
import { openEmbeddedDatabase } from '../embedded-database';
import { FolderLock } from '../embedded/folder-lock';

const [mode, dir, arg] = process.argv.slice(2);
const say = (event: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(event)}\n`);
// Made at once, so that it buffers the lines that come while the folder opens.
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

/** The next command, or null when stdin ended. */
async function next(): Promise<string | null> {
  const line = await lines.next();
  return line.done ? null : (line.value as string);
}

async function open(): Promise<void> {
  let db;
  try {
    db = await openEmbeddedDatabase({ dataDir: dir });
  } catch (err) {
    say({ refused: (err as Error).message, name: (err as Error).name });
    process.exit(3);
  }
  await db.exec('CREATE TABLE IF NOT EXISTS notes (id serial PRIMARY KEY, body text NOT NULL)');
  await db.query('INSERT INTO notes (body) VALUES ($1)', [arg]);
  say({ opened: process.pid });
  for (let line = await next(); line !== null; line = await next()) {
    if (line === 'exit') process.exit(0);
    if (line === 'close') {
      await db.close();
      say({ closed: true });
      process.exit(0);
    }
  }
}

async function race(): Promise<void> {
  say({ loaded: process.pid });
  let lock: FolderLock | undefined;
  for (let line = await next(); line !== null; line = await next()) {
    if (line !== 'go') continue;
    try {
      lock = await FolderLock.acquire(dir, { osLock: arg !== '0' });
      say({ won: true });
    } catch (err) {
      say({ refused: (err as Error).message, name: (err as Error).name });
    }
  }
  await lock?.release();
}

void (mode === 'open' ? open() : race());
