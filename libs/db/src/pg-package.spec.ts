/* eslint-disable @typescript-eslint/no-require-imports -- each case loads the module afresh, with pg replaced */
type Options = typeof import('./database-options');

/** A `pg` that cannot be loaded: `missing` names pg itself, else one of its own dependencies. */
const unloadable = (missing: string) => () => {
  throw Object.assign(new Error(`Cannot find module '${missing}' from 'database-options.ts'`), { code: 'MODULE_NOT_FOUND' });
};

/** What `use` returns or throws, with the module under test loaded afresh and `pg` replaced by what `factory` makes. */
function withPg(factory: () => unknown, use: (m: Options) => unknown): { value?: unknown; thrown?: unknown } {
  let out: { value?: unknown; thrown?: unknown } = {};
  jest.isolateModules(() => {
    jest.doMock('pg', factory);
    try {
      out = { value: use(require('./database-options') as Options) };
    } catch (thrown) {
      out = { thrown };
    }
  });
  jest.dontMock('pg');
  return out;
}

describe('pg is an optional peer of @zmodu/db', () => {
  it('the embedded database needs no pg: importing @zmodu/db and its options does not load it', () => {
    const { value, thrown } = withPg(unloadable('pg'), (m) => m.embeddedDataSourceOptions({} as never));
    expect(thrown).toBeUndefined();
    expect(value).toMatchObject({ type: 'postgres', installExtensions: false });
  });

  it('a server connection without pg installed fails where it is configured, naming the package to install', () => {
    const { thrown } = withPg(unloadable('pg'), (m) => m.serverDataSourceOptions('postgres://localhost/app'));
    // (A class of the isolated module registry: matched by its name.)
    expect(thrown).toMatchObject({ missing: true, name: 'PgPackageUnavailableException' });
    expect((thrown as Error).message).toBe(
      "A PostgreSQL server connection (serverDataSourceOptions) needs the pg package (PostgreSQL's client, an optional peer of @zmodu/db): npm install pg@^8.16.0",
    );
  });

  it('a pg that is installed but fails to load is told as that, with its reason', () => {
    const { thrown } = withPg(unloadable('pg-types'), (m) => m.listeningPgClient());
    expect(thrown).toMatchObject({ missing: false, name: 'PgPackageUnavailableException' });
    expect((thrown as Error).message).toMatch(/installed but failed to load \(Cannot find module 'pg-types'/);
  });

  it('with pg installed, the server options carry a client class that listens for errors', () => {
    const { serverDataSourceOptions, listeningPgClient } = require('./database-options') as Options;
    const options = serverDataSourceOptions('postgres://localhost/app') as { extra: { Client: unknown } };
    expect(options.extra.Client).toBe(listeningPgClient());
    const client = new (listeningPgClient())({}) as { listenerCount(event: string): number };
    expect(client.listenerCount('error')).toBe(1);
  });
});
