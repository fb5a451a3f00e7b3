// Prepares a PGlite data dir once (initdb is the slow part of a cold start) so that each
// test suite loads it instead of running initdb again. Skipped against a PostgreSQL server.
const { existsSync, writeFileSync, renameSync } = require('node:fs');
const { templatePath } = require('./pglite-template-path');

module.exports = async function globalSetup() {
  if (process.env.ZMODU_TEST_DATABASE_URL) return;
  const path = templatePath();
  if (existsSync(path)) return;
  const { PGlite } = require('@electric-sql/pglite');
  const db = await PGlite.create();
  const dump = await db.dumpDataDir('gzip');
  await db.close();
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, Buffer.from(await dump.arrayBuffer()));
  renameSync(tmp, path);
};
