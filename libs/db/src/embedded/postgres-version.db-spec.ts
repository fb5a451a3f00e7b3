import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EMBEDDED_POSTGRES_MAJOR, EmbeddedDatabase, openEmbeddedDatabase } from '../embedded-database';
import { EmbeddedDatabaseVersionException } from '../exceptions/embedded-database-version.exception';
import { embeddedTemplate } from '../testing/test-database';

/** Every file under a folder with its size and modification time, to show that nothing in it changed. */
function snapshot(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, name.name);
      if (name.isDirectory()) walk(path);
      else {
        const s = statSync(path);
        out.push(`${path.slice(dir.length)} ${s.size} ${s.mtimeMs}`);
      }
    }
  };
  walk(dir);
  return out.sort();
}

describe('the PostgreSQL major of an embedded database folder', () => {
  let root: string;
  let db: EmbeddedDatabase | undefined;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'zmodu-pgversion-'));
  });
  afterEach(async () => {
    await db?.close();
    db = undefined;
    rmSync(root, { recursive: true, force: true });
  });

  it('EMBEDDED_POSTGRES_MAJOR is the major of the PostgreSQL that the installed PGlite runs', async () => {
    db = await openEmbeddedDatabase({ loadDataDir: await embeddedTemplate() });
    const { rows } = await db.query("SELECT current_setting('server_version_num')::int / 10000 AS major");
    expect(String(rows[0].major)).toBe(EMBEDDED_POSTGRES_MAJOR);
  });

  it('a folder of another major (PostgreSQL 17, as PGlite 0.3 wrote it) is refused before PGlite opens it, unchanged, with the way to carry its data over', async () => {
    const dataDir = join(root, 'data');
    db = await openEmbeddedDatabase({ dataDir });
    await db.exec('CREATE TABLE kept (n int); INSERT INTO kept VALUES (17)');
    await db.close();
    db = undefined;
    writeFileSync(join(dataDir, 'PG_VERSION'), '17\n');
    const before = snapshot(dataDir);

    const err = await openEmbeddedDatabase({ dataDir }).then(
      (opened) => {
        db = opened;
        return null;
      },
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(EmbeddedDatabaseVersionException);
    expect(err).toMatchObject({
      name: 'EmbeddedDatabaseVersionException',
      dataDir,
      folderVersion: '17',
      embeddedVersion: EMBEDDED_POSTGRES_MAJOR,
    });
    const message = (err as Error).message;
    expect(message).toContain(`holds data of PostgreSQL 17, and this @zmodu/db embeds PostgreSQL ${EMBEDDED_POSTGRES_MAJOR}`);
    expect(message).toContain('@electric-sql/pglite@0.3.16 with @electric-sql/pglite-tools@0.2.21');
    expect(message).toContain('"Upgrading the embedded database" in docs/upgrading.md');
    expect(message).toContain(`delete ${dataDir}`);
    expect(snapshot(dataDir)).toEqual(before);

    // The refusal held no lock: once the folder is of this major again, it opens, with its data.
    writeFileSync(join(dataDir, 'PG_VERSION'), `${EMBEDDED_POSTGRES_MAJOR}\n`);
    db = await openEmbeddedDatabase({ dataDir });
    expect((await db.query('SELECT n FROM kept')).rows).toEqual([{ n: 17 }]);
  });

  it('a folder of a later major is refused the same way, naming it', async () => {
    const dataDir = join(root, 'later');
    db = await openEmbeddedDatabase({ dataDir });
    await db.close();
    db = undefined;
    writeFileSync(join(dataDir, 'PG_VERSION'), '19\n');
    const err = await openEmbeddedDatabase({ dataDir }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(EmbeddedDatabaseVersionException);
    expect((err as Error).message).toContain('holds data of PostgreSQL 19');
    expect((err as Error).message).toContain('the @electric-sql/pglite release that runs PostgreSQL 19');
    expect(readFileSync(join(dataDir, 'PG_VERSION'), 'utf8')).toBe('19\n');
  });
});
