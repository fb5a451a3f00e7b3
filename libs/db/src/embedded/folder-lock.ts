import { createHash, randomUUID } from 'node:crypto';
import { closeSync, fsyncSync, linkSync, openSync, readFileSync, realpathSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { connect, createServer, Server } from 'node:net';
import { hostname } from 'node:os';
import { basename } from 'node:path';
import { DbMessages } from '../db.messages';
import { EmbeddedDatabaseLockedException, EmbeddedFolderHolder } from '../exceptions/embedded-database-locked.exception';

/** What a lock file holds (JSON): who holds the folder, since when, and the token of this hold. */
interface LockRecord extends EmbeddedFolderHolder {
  /** Names one hold: a lock file is removed, or taken over, only through the token it holds. */
  readonly token: string;
  /** Linux: the holder's start time (field 22 of /proc/<pid>/stat), which tells a pid reused by another process apart. */
  readonly pidStart?: string;
  /** The holder listens on `<lock file>.<token>.sock` while it lives (see liveSocket). */
  readonly probe?: boolean;
}

type Read = LockRecord | 'absent' | 'unreadable';

/** One process's locks, shared by every copy of this module in it (a bundle, jest's module registries). */
interface Registry {
  /** token -> lock file of each folder lock this process holds. */
  readonly held: Map<string, string>;
  /** token -> the socket of each hold that has one (closed and removed with it). */
  readonly sockets: Map<string, Server>;
  exitHook: boolean;
}

const REGISTRY = Symbol.for('zmodu.db.folderLocks');
const TOKEN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** How often a start looks again at a lock that another live starter is taking over (25 ms apart: about a second). */
const ROUNDS = 40;
const ROUND_MS = 25;

/**
 * One process per embedded database folder (two PGlite instances writing one folder corrupt it: a catalog that misses
 * attributes, then an abort at open). Two locks, both taken before PGlite opens the folder:
 *
 * - a lock file beside the folder (`<folder>.lock`: inside it, initdb would refuse the non-empty folder and a dump would
 *   carry it), JSON with the holder's pid, host, program, start time and a token. It is created whole or not at all
 *   (written under a name of its own, then hard-linked into place: O_EXCL semantics, the content never half-written). A
 *   holder whose pid is dead (or a zombie, or a pid reused since: its start time differs) on this host is stale: its lock
 *   is taken over through a claim file named by the stale token (created with O_EXCL, so one starter of many wins), and
 *   the winner replaces the lock with one atomic rename only while it still holds that stale token. A holder on another
 *   host is never judged dead (its pids are not ours): the message says to delete the file if nothing there uses it.
 * - an OS-level lock, held by the kernel for as long as the process lives (released by any death, SIGKILL too): an
 *   abstract Unix socket named by the folder's device and inode on Linux, a named pipe on Windows, bound exclusively
 *   (a cluster worker does not share it). Node has no flock and the npm packages that add one are native addons; this
 *   needs none. Elsewhere (macOS) the lock file stands alone.
 *
 * The lock file is removed by `release()` and at process exit; a process killed without either leaves a stale one,
 * which the next start takes over.
 */
export class FolderLock {
  private released = false;

  private constructor(
    /** The folder (its real path: two paths to one folder share one lock). */
    readonly dir: string,
    readonly lockPath: string,
    private record: LockRecord,
    private readonly server: Server | undefined,
  ) {}

  /** Take both locks of `dataDir` (an existing folder), or throw EmbeddedDatabaseLockedException naming the holder. */
  static async acquire(dataDir: string, options: { readonly osLock?: boolean } = {}): Promise<FolderLock> {
    const dir = realpathSync(dataDir);
    const lockPath = `${dir}.lock`;
    const server = options.osLock === false ? undefined : await holdOsLock(dir, lockPath);
    try {
      return new FolderLock(dir, lockPath, await takeLockFile(dir, lockPath), server);
    } catch (err) {
      await closeServer(server);
      throw err;
    }
  }

  /**
   * Before every reopen of the folder: whether this process still holds it. A lock file removed (by hand) is taken again;
   * one that another live process holds now is not, and the folder must not be reopened.
   */
  async reassert(): Promise<boolean> {
    if (this.released) return false;
    const now = readRecord(this.lockPath);
    if (typeof now === 'object' && now.token === this.record.token) return true;
    try {
      const retaken = await takeLockFile(this.dir, this.lockPath);
      registry().held.delete(this.record.token);
      await closeSocket(this.lockPath, this.record.token);
      this.record = retaken;
      return true;
    } catch (err) {
      if (err instanceof EmbeddedDatabaseLockedException) return false;
      throw err;
    }
  }

  /** Remove the lock file (if it is still this hold's) and close the OS lock. Idempotent. */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    registry().held.delete(this.record.token);
    removeIfHeld(this.lockPath, this.record.token);
    await closeSocket(this.lockPath, this.record.token);
    await closeServer(this.server);
  }
}

function registry(): Registry {
  const global = globalThis as unknown as Record<symbol, Registry | undefined>;
  let r = global[REGISTRY];
  if (!r) {
    r = { held: new Map(), sockets: new Map(), exitHook: false };
    global[REGISTRY] = r;
  }
  if (!r.exitHook) {
    r.exitHook = true;
    const held = r.held;
    process.once('exit', () => {
      for (const [token, lockPath] of held) {
        removeIfHeld(lockPath, token);
        unlinkQuietly(socketPath(lockPath, token));
      }
    });
  }
  return r;
}

// ------------------------------------------------------------------ the lock file

async function takeLockFile(dir: string, lockPath: string): Promise<LockRecord> {
  const start = procStat('self')?.start;
  const token = randomUUID();
  // Listening before the lock file names it: whoever reads the record can reach the socket.
  const probe = await listenSocket(lockPath, token);
  const mine: LockRecord = {
    pid: process.pid,
    host: hostname(),
    since: new Date().toISOString(),
    program: programName(),
    token,
    ...(start !== undefined ? { pidStart: start } : {}),
    ...(probe ? { probe: true } : {}),
  };
  let won = false;
  try {
    const record = await placeLockFile(dir, lockPath, mine);
    won = true;
    return record;
  } finally {
    if (!won) await closeSocket(lockPath, token);
  }
}

async function placeLockFile(dir: string, lockPath: string, mine: LockRecord): Promise<LockRecord> {
  // Written whole under a name of its own first: the lock file appears with its content, never empty.
  const tmp = `${lockPath}.${mine.token}.tmp`;
  createExclusive(tmp, JSON.stringify(mine));
  try {
    let busy: LockRecord | undefined;
    for (let round = 0; round < ROUNDS; round++) {
      if (round > 0) await new Promise((r) => setTimeout(r, ROUND_MS));
      // No await from here to a return: the registry knows the token before anything else in this process runs.
      if (placeIfAbsent(tmp, lockPath)) return held(mine, lockPath);
      const current = readRecord(lockPath);
      if (current === 'absent') continue; // released meanwhile
      if (current === 'unreadable') {
        if (round < 3) continue; // a lock file written without hard links may be read half-written, for an instant
        throw new EmbeddedDatabaseLockedException(DbMessages.folderLockUnreadable(dir, lockPath), dir, lockPath, null);
      }
      if (await isAlive(current, lockPath)) throw refusal(dir, lockPath, current);
      const outcome = await takeOver(lockPath, tmp, current);
      if (outcome === 'taken') return held(mine, lockPath);
      busy = outcome === 'changed' ? undefined : outcome;
    }
    if (busy) throw new EmbeddedDatabaseLockedException(DbMessages.folderTakeOverBusy(dir, busy), dir, lockPath, holderOf(busy));
    const last = readRecord(lockPath);
    throw typeof last === 'object'
      ? refusal(dir, lockPath, last)
      : new EmbeddedDatabaseLockedException(DbMessages.folderLockUnreadable(dir, lockPath), dir, lockPath, null);
  } finally {
    unlinkQuietly(tmp);
  }
}

function held(record: LockRecord, lockPath: string): LockRecord {
  registry().held.set(record.token, lockPath);
  return record;
}

/**
 * Take over the lock of a holder found dead. Starters that found the same stale lock race for the claim file named by
 * its token (created with O_EXCL: one wins); the winner replaces the lock file (one rename) only if it still holds that
 * token, so a late starter that read it long ago never replaces the lock of the live process that won meanwhile. A claim
 * whose own claimer died before it finished is taken over the same way (its claim is named by the claimer's token).
 * 'taken': the lock is ours; 'changed': the lock moved on, look again; a record: a live starter is taking it over.
 */
async function takeOver(lockPath: string, tmp: string, stale: LockRecord): Promise<'taken' | 'changed' | LockRecord> {
  const dead = new Set([stale.token]);
  let target = stale;
  for (let depth = 0; depth < 8; depth++) {
    const claim = `${lockPath}.takeover-${target.token}`;
    if (placeIfAbsent(tmp, claim)) {
      const now = readRecord(lockPath);
      if (typeof now !== 'object' || !dead.has(now.token)) {
        unlinkQuietly(claim);
        return 'changed';
      }
      renameSync(tmp, lockPath);
      for (const token of dead) {
        unlinkQuietly(`${lockPath}.takeover-${token}`);
        unlinkQuietly(socketPath(lockPath, token));
      }
      return 'taken';
    }
    const claimer = readRecord(claim);
    if (claimer === 'absent' || claimer === 'unreadable') return 'changed';
    if (await isAlive(claimer, lockPath)) return claimer;
    dead.add(claimer.token);
    target = claimer;
  }
  return 'changed';
}

/** Put `tmp`'s content at `path` if nothing is there: a hard link (atomic, whole), or O_EXCL where links do not exist. */
function placeIfAbsent(tmp: string, path: string): boolean {
  try {
    linkSync(tmp, path);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw err;
  }
  try {
    createExclusive(path, readFileSync(tmp, 'utf8'));
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

function createExclusive(path: string, text: string): void {
  const fd = openSync(path, 'wx', 0o644);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** A lock file's record, checked field by field (a file anyone can write names no pid we would signal blindly). */
function readRecord(path: string): Read {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'absent' : 'unreadable';
  }
  if (text.length > 4096) return 'unreadable';
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return 'unreadable';
  }
  if (!raw || typeof raw !== 'object') return 'unreadable';
  const r = raw as Record<string, unknown>;
  const text64 = (v: unknown, max: number) => typeof v === 'string' && v.length > 0 && v.length <= max;
  if (!Number.isSafeInteger(r.pid) || (r.pid as number) <= 0) return 'unreadable';
  if (!text64(r.host, 255) || !text64(r.since, 64) || !text64(r.program, 200)) return 'unreadable';
  if (typeof r.token !== 'string' || !TOKEN.test(r.token)) return 'unreadable';
  if (r.pidStart !== undefined && (typeof r.pidStart !== 'string' || !/^\d{1,20}$/.test(r.pidStart))) return 'unreadable';
  if (r.probe !== undefined && r.probe !== true) return 'unreadable';
  return {
    pid: r.pid as number,
    host: r.host as string,
    since: r.since as string,
    program: r.program as string,
    token: r.token,
    ...(r.pidStart !== undefined ? { pidStart: r.pidStart as string } : {}),
    ...(r.probe === true ? { probe: true } : {}),
  };
}

/**
 * Whether the holder may be running. Another host's: assumed so (its pids are not ours). This process's: while the hold
 * is in the registry (else it is a former process with the same pid, as a container's restart gives). Another pid: it
 * exists, is not a zombie and, on Linux, started when the lock says (else the pid was reused). A holder whose pid looks
 * dead but whose socket answers is alive all the same: it runs in another PID namespace (a container on this host with
 * the same host name, sharing the folder), where its pid means nothing to us, and its abstract socket is in another
 * network namespace too; a connection to a socket file crosses both.
 */
async function isAlive(r: LockRecord, lockPath: string): Promise<boolean> {
  if (r.host !== hostname()) return true;
  if (r.pid === process.pid && registry().held.has(r.token)) return true;
  if (r.pid !== process.pid && pidAlive(r)) return true;
  return r.probe === true && (await liveSocket(socketPath(lockPath, r.token)));
}

function pidAlive(r: LockRecord): boolean {
  try {
    process.kill(r.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  const stat = procStat(r.pid);
  if (stat && (stat.state === 'Z' || stat.state === 'X')) return false;
  if (stat && r.pidStart !== undefined && stat.start !== r.pidStart) return false;
  return true;
}

// ------------------------------------------------------------------ the socket of a hold

/** Longest Unix socket path (sun_path less its NUL: 108 on Linux, 104 on macOS). */
const MAX_SOCKET_PATH = process.platform === 'linux' ? 107 : 103;
const PROBE_MS = 1000;

function socketPath(lockPath: string, token: string): string {
  return `${lockPath}.${token}.sock`;
}

/**
 * Listen on the hold's socket file (named by its token: no two starters ever share one), where Unix sockets exist and
 * the path fits; false when not (the pid alone tells then). A connection to it is closed at once.
 */
async function listenSocket(lockPath: string, token: string): Promise<boolean> {
  const path = socketPath(lockPath, token);
  if (process.platform === 'win32' || Buffer.byteLength(path) > MAX_SOCKET_PATH) return false;
  const server = createServer((socket) => socket.destroy());
  const ok = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen({ path, exclusive: true }, () => resolve(true));
  });
  if (!ok) return false;
  server.on('error', () => undefined);
  server.unref();
  registry().sockets.set(token, server);
  return true;
}

async function closeSocket(lockPath: string, token: string): Promise<void> {
  const server = registry().sockets.get(token);
  if (!server) return;
  registry().sockets.delete(token);
  await closeServer(server);
  unlinkQuietly(socketPath(lockPath, token));
}

/** Whether a process listens on `path`: a connection is accepted (a stopped holder's kernel accepts it too). */
function liveSocket(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ path });
    const done = (alive: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(alive);
    };
    // No answer in time: it may be alive (a full backlog), so it is.
    const timer = setTimeout(() => done(true), PROBE_MS);
    socket.once('connect', () => done(true));
    // Nothing there, or no one listening: the file a dead holder left. Anything else (EACCES, EAGAIN): it may be alive.
    socket.once('error', (err: NodeJS.ErrnoException) => done(err.code !== 'ENOENT' && err.code !== 'ECONNREFUSED'));
  });
}

/** Linux: a process's state and start time from /proc/<pid>/stat; undefined elsewhere or when unreadable. */
function procStat(pid: number | 'self'): { state: string; start: string } | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so the fields are counted after the last ')'.
    const rest = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return rest.length > 19 ? { state: rest[0], start: rest[19] } : undefined;
  } catch {
    return undefined;
  }
}

function programName(): string {
  const name = [process.argv0, process.argv[1]]
    .filter((p): p is string => typeof p === 'string' && p !== '')
    .map((p) => basename(p))
    .join(' ');
  // eslint-disable-next-line no-control-regex -- control characters are what it removes (the name goes into messages)
  return (name.replace(/[\u0000-\u001f\u007f-\u009f]/g, '') || 'node').slice(0, 200);
}

function holderOf(r: LockRecord): EmbeddedFolderHolder {
  return { pid: r.pid, host: r.host, since: r.since, program: r.program };
}

function refusal(dir: string, lockPath: string, r: LockRecord): EmbeddedDatabaseLockedException {
  // This process's own hold; the same pid in another PID namespace is another process.
  const here = r.pid === process.pid && r.host === hostname() && registry().held.has(r.token);
  const message = here ? DbMessages.folderInUseHere(dir, r.since) : DbMessages.folderInUse(dir, r, lockPath);
  return new EmbeddedDatabaseLockedException(message, dir, lockPath, holderOf(r));
}

function removeIfHeld(lockPath: string, token: string): void {
  const now = readRecord(lockPath);
  if (typeof now === 'object' && now.token === token) unlinkQuietly(lockPath);
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // gone already
  }
}

// ------------------------------------------------------------------ the OS-level lock

/** The kernel-held name of the folder (by device and inode: every path to it, bind mounts too), where there is one. */
function osLockName(dir: string): string | undefined {
  if (process.platform !== 'linux' && process.platform !== 'win32') return undefined;
  const st = statSync(dir, { bigint: true });
  const id = createHash('sha256').update(`${st.dev}:${st.ino}`).digest('hex').slice(0, 40);
  return process.platform === 'linux' ? `\0zmodu-pglite-${id}` : `\\\\.\\pipe\\zmodu-pglite-${id}`;
}

/**
 * Bind the folder's name: the server is the lock (unref'd: it never keeps the process alive; a connection to it is
 * closed at once). Taken: the holder is alive, named from its lock file. undefined where the platform has none.
 */
async function holdOsLock(dir: string, lockPath: string): Promise<Server | undefined> {
  const name = osLockName(dir);
  if (!name) return undefined;
  const server = createServer((socket) => socket.destroy());
  const outcome = await new Promise<'held' | 'taken' | 'unsupported'>((resolve) => {
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'EADDRINUSE' ? 'taken' : 'unsupported'));
    server.listen({ path: name, exclusive: true }, () => resolve('held'));
  });
  if (outcome === 'held') {
    server.on('error', () => undefined);
    server.unref();
    return server;
  }
  if (outcome === 'unsupported') return undefined;
  // The holder writes its lock file right after binding (over a stale one, maybe): give it a moment to appear.
  for (let i = 0; i < ROUNDS; i++) {
    const r = readRecord(lockPath);
    if (typeof r === 'object' && (await isAlive(r, lockPath))) throw refusal(dir, lockPath, r);
    await new Promise((resolve) => setTimeout(resolve, ROUND_MS));
  }
  throw new EmbeddedDatabaseLockedException(DbMessages.folderOpening(dir), dir, lockPath, null);
}

function closeServer(server: Server | undefined): Promise<void> {
  if (!server?.listening) return Promise.resolve();
  return new Promise((resolve) => server.close(() => resolve()));
}
