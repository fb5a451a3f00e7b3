import { INestApplication, Provider } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import { AppModule } from '../../apps/sample/src/app.module';
import { SampleHttpOptions, serveHttp } from '../../apps/sample/src/http';
import { SampleAppOptions } from '../../apps/sample/src/sample.options';

/**
 * For a describe block: one throwaway database (created before all, dropped after all) and sample apps on it,
 * booted with `boot(options)` (on the embedded database, closing the apps booted before) and closed after each test (an app a test closed itself is taken out with `forget`).
 */
export function sampleAppsOnTestDatabase(jwtSecret: string) {
  let db: TestDatabase | undefined;
  const apps: INestApplication[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
  });
  afterAll(async () => {
    await db?.drop();
  });

  return {
    /** `providers`: extra providers in the test module (e.g. a test-only @Skill class, found by the skill explorer); `http`: serveHttp's. */
    async boot(
      over: Partial<SampleAppOptions> = {},
      providers: Provider[] = [],
      http: SampleHttpOptions = { docs: true },
    ): Promise<INestApplication> {
      const database = db;
      if (!database) throw new Error('boot() runs inside a test, after beforeAll created the database.');
      // An embedded folder is open in one instance at a time (its lock): the next app on it stands for the next process,
      // so the ones before are closed first (their queued audit entries and charges written), as a stopped process's are.
      if (database.kind === 'pglite') for (const earlier of apps.splice(0)) await earlier.close();
      const moduleRef = await Test.createTestingModule({
        imports: [AppModule.register({ dataSource: () => database.options(), jwtSecret, ...over })],
        providers,
      }).compile();
      const app = moduleRef.createNestApplication({ logger: ['error'] });
      apps.push(app);
      serveHttp(app, http); // as main.ts does (docs: as in development)
      await app.init();
      return app;
    },
    /** The apps booted so far are closed already (by the test): not closed again after it. */
    forget(): void {
      apps.splice(0);
    },
  };
}
