/**
 * The code of the worker thread that owns one PGlite instance. It is a string (run with
 * `eval: true`) so that it travels inside any bundle of the app; PGlite is required relative to
 * the file that started the worker. Requests are handled one after another, so the steps of one
 * request never interleave with another's.
 */
export const PGLITE_WORKER_SOURCE = String.raw`
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const { createRequire } = require('node:module');
const { join } = require('node:path');
// PGlite is found from the file that started the worker (bundlers leave this string alone), else from the working directory.
function loadPglite() {
  try {
    return createRequire(workerData.from)('@electric-sql/pglite');
  } catch (first) {
    try {
      return createRequire(join(process.cwd(), 'noop.js'))('@electric-sql/pglite');
    } catch {
      throw first;
    }
  }
}
const { PGlite, types } = loadPglite();
let db;

// PostgreSQL writes its files through Emscripten's NODEFS, which calls this thread's fs.writeSync: note a write that
// failed for lack of space, so that what it caused is told as a full disk. Most such writes come back as SQLSTATE 53100
// (could not extend file); one of the WAL is a PANIC, which aborts PGlite's WebAssembly (RuntimeError: Aborted()).
const fs = require('node:fs');
let noSpace = false;
const writeSync = fs.writeSync;
fs.writeSync = function (...args) {
  try {
    return writeSync.apply(this, args);
  } catch (e) {
    if (e && e.code === 'ENOSPC') noSpace = true;
    throw e;
  }
};
const NO_SPACE_MESSAGE =
  'The embedded database could not write to its data folder (no space left on device)';

function serializeError(e) {
  const out = { message: String((e && e.message) || e) };
  for (const k of ['code', 'severity', 'detail', 'hint', 'position', 'schema', 'table', 'column', 'dataType', 'constraint', 'routine', 'where'])
    if (e && e[k] !== undefined) out[k] = e[k];
  return out;
}

// PGlite 0.5 does not trap when a statement runs its WebAssembly out of stack (a deep recursion of SQL or PL/pgSQL
// functions, a very long UNION): the statement's error is lost, and PGlite hands back an empty result with no command
// tag, or 26000 'unnamed prepared statement does not exist' (the Parse failed unreported). Its session is unsound after
// it (empty rows for SELECT 1, XX000 ERRORDATA_STACK_SIZE exceeded). PostgreSQL completes every statement with a
// command tag, and only a blank one (whitespace, comments, semicolons) has none: any other untagged result is this, the
// caller gets an error (never the empty rows) and the worker is restarted.
function unsound(what) {
  const e = new Error('PGlite lost a statement: ' + what);
  e.unsound = true;
  return e;
}
function blank(sql) {
  return String(sql).replace(/--[^\n]*/g, '').replace(/\/\*[\s\S]*?\*\//g, '').replace(/[\s;]/g, '') === '';
}
// The same at the protocol: PGlite answers each message of the frontend through execProtocolStream, and an answer that
// lacks what the protocol says ends it (ReadyForQuery after a Query or a Sync, CommandComplete after an Execute, ...) is
// this failure. An answer that carries an error is a statement's own error and is passed on as PostgreSQL gave it.
const ENDS = new Map([
  [80, ['parseComplete']], // P: Parse
  [66, ['bindComplete']], // B: Bind
  [68, ['parameterDescription', 'rowDescription', 'noData']], // D: Describe
  [69, ['commandComplete', 'emptyQuery', 'portalSuspended']], // E: Execute
  [81, ['readyForQuery']], // Q: Query
  [83, ['readyForQuery']], // S: Sync
]);
function watchProtocol(instance) {
  const stream = instance.execProtocolStream;
  if (typeof stream !== 'function') return;
  instance.execProtocolStream = async function (message, options) {
    const messages = await stream.call(this, message, options);
    const ends = message && ENDS.get(message[0]);
    if (ends && Array.isArray(messages)) {
      let ended = false;
      for (let i = messages.length - 1; i >= 0 && !ended; i--) {
        const name = messages[i] && messages[i].name;
        ended = name === 'error' || ends.includes(name);
      }
      if (!ended) throw unsound('an answer of the backend that does not end as the protocol says');
    }
    return messages;
  };
}
function tagged(r, sql) {
  if (r.command === undefined && !blank(sql)) throw unsound('a result with no command tag');
  return r;
}

function shape(r) {
  return { rows: r.rows, fields: r.fields.map((f) => ({ name: f.name, dataTypeID: f.dataTypeID })), affectedRows: r.affectedRows };
}

async function open() {
  const options = { parsers: { [types.INT8]: (v) => v, [types.NUMERIC]: (v) => v } };
  if (workerData.dataDir) options.dataDir = workerData.dataDir;
  if (workerData.loadDataDir) options.loadDataDir = new Blob([workerData.loadDataDir]);
  db = await PGlite.create(options);
  watchProtocol(db);
  // PGlite starts with planner settings of its own on its command line (enable_seqscan=off was seen):
  // set them back to PostgreSQL's defaults, so that plans are those of a server.
  const changed = await db.query(
    "SELECT name, boot_val FROM pg_settings WHERE category LIKE 'Query Tuning%' AND source = 'command line' AND setting IS DISTINCT FROM boot_val",
  );
  for (const row of changed.rows) await db.query('SELECT set_config($1, $2, false)', [row.name, row.boot_val]);
  return (await db.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
}

async function handle(m) {
  switch (m.op) {
    case 'query':
      return shape(tagged(await db.query(m.sql, m.params || []), m.sql));
    case 'exec':
      return (await db.exec(m.sql)).map((r) => shape(tagged(r, m.sql)));
    case 'readOnly': {
      // One READ ONLY transaction, always rolled back; every statement over the extended protocol.
      tagged(await db.query('BEGIN TRANSACTION READ ONLY'), 'BEGIN');
      try {
        // The settings and the role in one statement (set_config('role', r, true) is SET LOCAL ROLE).
        const pairs = Object.entries(m.settings || {});
        if (m.role) pairs.push(['role', m.role]);
        if (pairs.length) {
          const params = [];
          const calls = pairs.map(([n, v]) => {
            params.push(n, v);
            return 'pg_catalog.set_config($' + (params.length - 1) + ', $' + params.length + ', true)';
          });
          tagged(await db.query('SELECT ' + calls.join(', '), params), 'SELECT');
        }
        const r = tagged(await db.query(m.text, m.values || []), m.text);
        // Rows past the byte budget stay here: they are not copied to the app's thread.
        let rows = r.rows;
        let truncated = false;
        if (m.maxBytes) {
          let bytes = 0;
          const kept = [];
          for (const row of rows) {
            bytes += Buffer.byteLength(JSON.stringify(row, (_k, v) => (typeof v === 'bigint' ? String(v) : v)) || '');
            if (bytes > m.maxBytes) {
              truncated = true;
              break;
            }
            kept.push(row);
          }
          rows = kept;
        }
        const fields = r.fields.map((f) => f.name);
        return truncated ? { rows, fields, truncated } : { rows, fields };
      } finally {
        tagged(await db.query('ROLLBACK'), 'ROLLBACK');
        // A session-level advisory lock survives the rollback: release what the session holds, as its own role (a role
        // that may not call it could not have taken one through the reader either).
        if (m.releaseSessionLocks) await db.query('SELECT pg_catalog.pg_advisory_unlock_all()').catch(() => undefined);
      }
    }
    case 'dump': {
      const blob = await db.dumpDataDir('gzip');
      return new Uint8Array(await blob.arrayBuffer());
    }
    case 'close':
      if (db && !db.closed) await db.close();
      return null;
    default:
      throw new Error('unknown request ' + m.op);
  }
}

// A WebAssembly trap (out of stack or memory) or an abort (a PANIC: the WAL could not be written on a full disk) leaves
// PGlite unusable: the main thread restarts the worker.
// An unsound session (see unsound()) is restarted the same way.
function isFatal(e) {
  const message = String(e && e.message);
  return (
    e instanceof WebAssembly.RuntimeError ||
    (e && e.unsound === true) ||
    /Program terminated|memory access out of bounds|unreachable|Aborted\(/.test(message) ||
    (e && e.code === 'XX000' && /ERRORDATA_STACK_SIZE exceeded/.test(message)) ||
    (e && e.code === '26000' && /^unnamed prepared statement does not exist/.test(message))
  );
}

let tail = Promise.resolve();
parentPort.on('message', (m) => {
  tail = tail.then(async () => {
    noSpace = false;
    try {
      parentPort.postMessage({ id: m.id, ok: true, result: await handle(m) });
    } catch (e) {
      if (isFatal(e) && noSpace)
        parentPort.postMessage({
          id: m.id,
          ok: false,
          fatal: true,
          error: { message: NO_SPACE_MESSAGE + ' and is being restarted: free space on its disk.', code: '53100' },
        });
      else if (isFatal(e))
        parentPort.postMessage({
          id: m.id,
          ok: false,
          fatal: true,
          error: { message: 'The embedded database ran out of stack or memory on this statement and is being restarted: simplify the statement.', code: '54001' },
        });
      else parentPort.postMessage({ id: m.id, ok: false, error: serializeError(e) });
    }
  });
});

open().then(
  (pid) => parentPort.postMessage({ ready: true, pid }),
  (e) =>
    parentPort.postMessage({
      ready: false,
      error: noSpace ? { message: NO_SPACE_MESSAGE + ' (' + String((e && e.message) || e) + ')', code: '53100' } : serializeError(e),
    }),
);
`;
