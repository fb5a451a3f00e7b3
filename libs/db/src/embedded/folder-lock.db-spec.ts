import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedDatabase, openEmbeddedDatabase } from '../embedded-database';
import { EmbeddedDatabaseLockedException } from '../exceptions/embedded-database-locked.exception';
import { FolderLock } from './folder-lock';

/** Runs TypeScript sources in a child process, each file transpiled once (scripts/register-ts.js). */
const REGISTER_TS = join(__dirname, '..', '..', '..', '..', 'scripts', 'register-ts.js');

const ROOT = join(__dirname, '..', '..', '..', '..');
const HOLDER = join(__dirname, '..', '__fixtures__', 'folder-holder.ts');

/** A process of its own (libs/db/src/__fixtures__/folder-holder.ts) and the JSON lines it printed. */
interface Holder {
  readonly child: ChildProcess;
  readonly events: Array<Record<string, unknown>>;
  readonly exited: Promise<number | null>;
  output(): string;
}

function startHolder(...args: string[]): Holder {
  const child = spawn(process.execPath, ['-r', REGISTER_TS, HOLDER, ...args], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const events: Array<Record<string, unknown>> = [];
  let out = '';
  let pending = '';
  child.stdout?.on('data', (c: Buffer) => {
    out += c.toString();
    pending += c.toString();
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) if (line.startsWith('{')) events.push(JSON.parse(line) as Record<string, unknown>);
  });
  child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, events, exited, output: () => out };
}

/** Poll until the holder printed an event with `key`, at most `ms`. */
async function eventOf(h: Holder, key: string, ms = 120_000): Promise<Record<string, unknown>> {
  const until = Date.now() + ms;
  for (;;) {
    const found = h.events.find((e) => key in e);
    if (found) return found;
    if (h.child.exitCode !== null || Date.now() > until)
      throw new Error(`no "${key}" from the holder (exit ${h.child.exitCode}):\n${h.output().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The pid of a process that ran and has ended (reaped): a pid nothing holds now. */
function deadPid(): number {
  const done = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(done.stdout);
}

function writeLock(lockPath: string, fields: Record<string, unknown>): void {
  const lock = { host: hostname(), since: '2026-01-01T00:00:00.000Z', program: 'node main.js', token: randomUUID(), ...fields };
  writeFileSync(lockPath, JSON.stringify(lock));
}

async function notes(dir: string): Promise<string[]> {
  const db = await openEmbeddedDatabase({ dataDir: dir });
  try {
    return (await db.query('SELECT body FROM notes ORDER BY id')).rows.map((r) => String(r.body));
  } finally {
    await db.close();
  }
}

// Each case spawns processes that open PGlite from the TypeScript sources (ts-node): seconds each on a loaded machine.
jest.setTimeout(240_000);

describe('one process per embedded database folder', () => {
  let base: string;
  const children: Holder[] = [];

  beforeEach(() => {
    base = mkdtempSync(join(tmpdir(), 'zmodu-folder-lock-'));
  });

  afterEach(async () => {
    for (const h of children.splice(0)) if (h.child.exitCode === null && h.child.signalCode === null) h.child.kill('SIGKILL');
    rmSync(base, { recursive: true, force: true });
  });

  const holder = (...args: string[]) => {
    const h = startHolder(...args);
    children.push(h);
    return h;
  };

  it('refuses a second process on the folder, naming the holder, and the data stays whole (attack: the CLI opened the app’s .data/pglite while the app ran)', async () => {
    const dir = join(base, 'pglite');
    const app = holder('open', dir, 'written by the app');
    expect(await eventOf(app, 'opened')).toEqual({ opened: app.child.pid });

    const cli = holder('open', dir, 'written by the cli');
    const refused = await eventOf(cli, 'refused');
    expect(await cli.exited).toBe(3);
    expect(refused.name).toBe('EmbeddedDatabaseLockedException');
    expect(refused.refused).toContain(`is in use by process ${app.child.pid} (node folder-holder.ts) on ${hostname()} since `);
    expect(refused.refused).toContain('DATABASE_URL=postgres://');
    expect(refused.refused).toContain(`delete ${dir}.lock`);
    // This process too, by another path to the same folder.
    symlinkSync(dir, join(base, 'link'));
    const err = await openEmbeddedDatabase({ dataDir: join(base, 'link') }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EmbeddedDatabaseLockedException);
    expect((err as EmbeddedDatabaseLockedException).holder).toMatchObject({ pid: app.child.pid, host: hostname() });

    // The holder goes on, then closes: its lock is removed, and what it wrote is there (the refused one wrote nothing).
    app.child.stdin?.write('close\n');
    expect(await eventOf(app, 'closed')).toEqual({ closed: true });
    expect(await app.exited).toBe(0);
    expect(existsSync(`${dir}.lock`)).toBe(false);
    expect(await notes(dir)).toEqual(['written by the app']);
    expect(existsSync(`${dir}.lock`)).toBe(false);
  });

  it('takes over the lock of a holder killed with SIGKILL, and a process that exits without closing leaves none (attack: a crashed app’s lock)', async () => {
    const dir = join(base, 'pglite');
    const killed = holder('open', dir, 'before the kill');
    await eventOf(killed, 'opened');
    killed.child.kill('SIGKILL');
    await killed.exited;
    expect(JSON.parse(readFileSync(`${dir}.lock`, 'utf8'))).toMatchObject({ pid: killed.child.pid });

    const next = holder('open', dir, 'after the kill');
    await eventOf(next, 'opened');
    expect(JSON.parse(readFileSync(`${dir}.lock`, 'utf8'))).toMatchObject({ pid: next.child.pid, host: hostname() });
    next.child.stdin?.write('exit\n');
    expect(await next.exited).toBe(0);
    expect(existsSync(`${dir}.lock`)).toBe(false);
    expect(await notes(dir)).toEqual(['before the kill', 'after the kill']);
  });

  it('takes over a stale lock of a dead pid; refuses one of a live pid, of another host, or that it cannot read', async () => {
    const dir = join(base, 'pglite');
    mkdirSync(dir);
    const lockPath = `${dir}.lock`;

    writeLock(lockPath, { pid: deadPid() });
    const db: EmbeddedDatabase = await openEmbeddedDatabase({ dataDir: dir });
    expect(JSON.parse(readFileSync(lockPath, 'utf8'))).toMatchObject({ pid: process.pid });
    await db.close();
    expect(existsSync(lockPath)).toBe(false);

    // A pid reused since by another process (its start time is not the lock's) is stale too.
    writeLock(lockPath, { pid: process.ppid, pidStart: '1' });
    await (await FolderLock.acquire(dir)).release();

    const refusals: Array<[Record<string, unknown> | string, RegExp]> = [
      [{ pid: process.ppid }, new RegExp(`in use by process ${process.ppid} \\(node main\\.js\\) on ${hostname()} since 2026-01-01`)],
      [{ pid: deadPid(), host: 'another-host' }, /in use by process \d+ \(node main\.js\) on another-host since .*delete .*pglite\.lock/],
      ['{"pid": -1, "host": "x"}', /does not say which process holds it .*If no process uses the folder, delete .*pglite\.lock/],
    ];
    for (const [lock, message] of refusals) {
      if (typeof lock === 'string') writeFileSync(lockPath, lock);
      else writeLock(lockPath, lock);
      const before = readFileSync(lockPath, 'utf8');
      const refused = await FolderLock.acquire(dir).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(EmbeddedDatabaseLockedException);
      expect((refused as Error).message).toMatch(message);
      // Nothing taken, nothing left: the lock as it was, no claim or temporary file beside it.
      expect(readFileSync(lockPath, 'utf8')).toBe(before);
    }
    rmSync(lockPath);
    expect(spawnSync('ls', [base], { encoding: 'utf8' }).stdout.trim()).toBe('pglite');
  });

  it('refuses a lock whose pid looks dead or ours but whose holder answers on its socket (attack: a holder in another PID and network namespace, a container on this host with the same host name, was taken for dead)', async () => {
    const dir = join(base, 'pglite');
    mkdirSync(dir);
    const lockPath = `${dir}.lock`;
    const token = randomUUID();
    const socket = `${lockPath}.${token}.sock`;
    // The holder as another namespace shows it: a pid that means nothing here (dead, or this very pid, as two
    // containers' pid 1), but a process that listens on the socket its lock names.
    const listener = spawn(process.execPath, [
      '-e',
      "require('net').createServer((s) => s.destroy()).listen(process.argv[1], () => console.log('listening'))",
      socket,
    ]);
    const other: Holder = { child: listener, events: [], exited: new Promise((r) => listener.on('exit', r)), output: () => '' };
    children.push(other);
    await new Promise<void>((resolve) => listener.stdout.once('data', () => resolve()));
    for (const pid of [deadPid(), process.pid]) {
      writeLock(lockPath, { pid, token, probe: true });
      const before = readFileSync(lockPath, 'utf8');
      const refused = await FolderLock.acquire(dir).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(EmbeddedDatabaseLockedException);
      expect((refused as Error).message).toMatch(new RegExp(`in use by process ${pid} \\(node main\\.js\\) on ${hostname()}`));
      expect(readFileSync(lockPath, 'utf8')).toBe(before);
    }
    // It dies: the socket file it left answers no more, and the lock is taken over (the file removed with it).
    listener.kill('SIGKILL');
    await other.exited;
    expect(existsSync(socket)).toBe(true);
    const lock = await FolderLock.acquire(dir);
    expect(JSON.parse(readFileSync(lockPath, 'utf8'))).toMatchObject({ pid: process.pid, probe: true });
    expect(existsSync(socket)).toBe(false);
    await lock.release();
    expect(spawnSync('ls', [base], { encoding: 'utf8' }).stdout.trim()).toBe('pglite');
  });

  it('refuses a second open in the same process, by any path to the folder', async () => {
    const dir = join(base, 'pglite');
    mkdirSync(dir);
    symlinkSync(dir, join(base, 'link'));
    const first = await FolderLock.acquire(dir);
    const again = await FolderLock.acquire(join(base, 'link')).catch((e: unknown) => e);
    expect((again as Error).message).toMatch(/is open in this process already/);
    // The lock file alone says so too (no OS lock).
    const fileOnly = await FolderLock.acquire(join(base, 'link'), { osLock: false }).catch((e: unknown) => e);
    expect((fileOnly as Error).message).toMatch(/is open in this process already/);
    await first.release();
    await (await FolderLock.acquire(join(base, 'link'))).release();
  });

  for (const osLock of ['0', '1'])
    it(`two starters racing for a stale lock: exactly one wins (${osLock === '0' ? 'the lock file alone' : 'with the OS-level lock'})`, async () => {
      const dir = join(base, 'pglite');
      mkdirSync(dir);
      writeLock(`${dir}.lock`, { pid: deadPid() });
      const racers = Array.from({ length: 5 }, () => holder('race', dir, osLock));
      for (const r of racers) await eventOf(r, 'loaded');
      for (const r of racers) r.child.stdin?.write('go\n');
      const outcomes = await Promise.all(racers.map((r) => Promise.race([eventOf(r, 'won'), eventOf(r, 'refused')])));
      const winners = racers.filter((_, i) => 'won' in outcomes[i]);
      expect(winners).toHaveLength(1);
      const winner = winners[0].child.pid;
      for (const o of outcomes.filter((x) => 'refused' in x))
        expect(o.refused).toMatch(new RegExp(`(in use by|being taken over by|being opened by another process)( process ${winner})?`));
      expect(JSON.parse(readFileSync(`${dir}.lock`, 'utf8'))).toMatchObject({ pid: winner });
      for (const r of racers) r.child.stdin?.end();
      for (const r of racers) expect(await r.exited).toBe(0);
      expect(existsSync(`${dir}.lock`)).toBe(false);
      expect(spawnSync('ls', ['-A', base], { encoding: 'utf8' }).stdout.trim()).toBe('pglite');
    });

  it('many starters of one process racing for a stale lock file: exactly one wins', async () => {
    const dir = join(base, 'pglite');
    mkdirSync(dir);
    writeLock(`${dir}.lock`, { pid: deadPid() });
    const outcomes = await Promise.allSettled(Array.from({ length: 12 }, () => FolderLock.acquire(dir, { osLock: false })));
    const won = outcomes.filter((o): o is PromiseFulfilledResult<FolderLock> => o.status === 'fulfilled');
    expect(won).toHaveLength(1);
    for (const o of outcomes) if (o.status === 'rejected') expect(o.reason).toBeInstanceOf(EmbeddedDatabaseLockedException);
    await won[0].value.release();
    expect(existsSync(`${dir}.lock`)).toBe(false);
  });

  it('does not reopen the folder after a restart once another process holds its lock (attack: the lock file deleted by hand)', async () => {
    const dir = join(base, 'pglite');
    const db = await openEmbeddedDatabase({ dataDir: dir });
    try {
      await db.exec('CREATE TABLE notes (id serial PRIMARY KEY, body text NOT NULL)');
      // Someone deletes the lock, and another (live) process takes the folder: this one's next reopen must not happen.
      writeLock(`${dir}.lock`, { pid: process.ppid });
      const timedOut = await db.readOnly({ text: 'SELECT pg_sleep(5)', values: [], timeoutMs: 50 }).catch((e: unknown) => e);
      expect(timedOut).toMatchObject({ code: '57014' });
      const refused = await db.query('SELECT 1').catch((e: unknown) => e);
      expect(refused).toMatchObject({ code: '57P03' });
      expect((refused as Error).message).toMatch(/is no longer locked by this process .*so it is not reopened/);
      // The lock file alone deleted (nobody took it): the next reopen takes it again.
      rmSync(`${dir}.lock`);
      const until = Date.now() + 30_000;
      let answer: unknown;
      while (Date.now() < until && !Array.isArray((answer as { rows?: unknown })?.rows)) {
        answer = await db.query('SELECT count(*)::int AS n FROM notes').catch((e: unknown) => e);
        if (!Array.isArray((answer as { rows?: unknown })?.rows)) await new Promise((r) => setTimeout(r, 250));
      }
      expect(answer).toMatchObject({ rows: [{ n: 0 }] });
      expect(JSON.parse(readFileSync(`${dir}.lock`, 'utf8'))).toMatchObject({ pid: process.pid });
    } finally {
      await db.close();
    }
    expect(existsSync(`${dir}.lock`)).toBe(false);
  });
});
