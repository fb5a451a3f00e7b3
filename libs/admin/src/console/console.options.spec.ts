import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Test } from '@nestjs/testing';
import { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { AdminModule } from '../admin.module';
import { InvalidConsoleOptionsException } from '../exceptions/invalid-console-options.exception';
import { AdminConsoleOptions, consoleBuild, resolveConsoleOptions } from './console.options';

describe('the approvals console options', () => {
  let built: string;
  let empty: string;

  beforeAll(() => {
    built = mkdtempSync(join(tmpdir(), 'zmodu-console-'));
    mkdirSync(join(built, 'assets'));
    writeFileSync(join(built, 'index.html'), '<!doctype html><title>t</title><script type="module" src="./assets/a.js"></script>');
    writeFileSync(join(built, 'assets', 'a.js'), 'console.log(1)');
    writeFileSync(join(built, 'assets', 'notes.exe'), 'MZ');
    empty = mkdtempSync(join(tmpdir(), 'zmodu-console-empty-'));
  });

  afterAll(() => {
    rmSync(built, { recursive: true, force: true });
    rmSync(empty, { recursive: true, force: true });
  });

  it('fills in the defaults, and finds the built console among the candidate folders', () => {
    expect(resolveConsoleOptions(undefined, [empty, built])).toEqual({
      title: 'Approvals',
      loginUrl: null,
      pollIntervalMs: 5000,
      root: built,
    });
    expect(resolveConsoleOptions({}, [empty])).toMatchObject({ root: null });
    expect(resolveConsoleOptions({ title: ' Desk ', loginUrl: '/login?next=console', pollIntervalMs: 1000, root: built }, [])).toEqual({
      title: 'Desk',
      loginUrl: '/login?next=console',
      pollIntervalMs: 1000,
      root: built,
    });
    expect(resolveConsoleOptions({ loginUrl: 'https://sso.example.com/login' }, [])).toMatchObject({
      loginUrl: 'https://sso.example.com/login',
    });
  });

  it.each<[string, AdminConsoleOptions | unknown]>([
    ['title', { title: '' }],
    ['title', { title: 'x'.repeat(101) }],
    ['title', { title: 'a\nb' }],
    ['loginUrl', { loginUrl: 'javascript:alert(1)' }],
    ['loginUrl', { loginUrl: '//evil.example.com/login' }],
    ['loginUrl', { loginUrl: '/\\evil.example.com' }],
    ['loginUrl', { loginUrl: 'login' }],
    ['loginUrl', { loginUrl: 42 }],
    ['pollIntervalMs', { pollIntervalMs: 999 }],
    ['pollIntervalMs', { pollIntervalMs: 1.5 }],
    ['pollIntervalMs', { pollIntervalMs: '5000' }],
    ['root', { root: 'relative/dir' }],
    ['root', { root: '/nonexistent/zmodu-console' }],
    ['colour', { colour: 'red' }],
  ])('refuses a bad %s at boot, naming it', (field, options) => {
    let error: unknown;
    try {
      resolveConsoleOptions(options as AdminConsoleOptions, []);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(InvalidConsoleOptionsException);
    expect((error as InvalidConsoleOptionsException).field).toBe(field);
    expect((error as Error).message).toContain(`'${field}'`);
  });

  describe('served by AdminModule', () => {
    const boot = async (console: boolean | AdminConsoleOptions): Promise<INestApplication> => {
      const moduleRef = await Test.createTestingModule({
        imports: [AdminModule.forRoot({ approvals: false, console })],
      }).compile();
      const app = moduleRef.createNestApplication({ logger: false });
      await app.init();
      return app;
    };

    it('serves the files of its root by name only (an asset of an unknown type is not served)', async () => {
      const app = await boot({ root: built });
      try {
        const http = request(app.getHttpServer());
        expect((await http.get('/admin/console/').expect(200)).text).toContain('./assets/a.js');
        await http
          .get('/admin/console/assets/a.js')
          .expect(200)
          .expect('content-type', /javascript/);
        await http.get('/admin/console/assets/notes.exe').expect(404);
        await http.get('/admin/console/assets/..%2Findex.html').expect(404);
      } finally {
        await app.close();
      }
    });

    it('says how to build it when it is not built (503), instead of failing the application', async () => {
      const roots = jest.spyOn(consoleBuild, 'roots').mockReturnValue([empty]);
      const app = await boot(true);
      try {
        const res = await request(app.getHttpServer()).get('/admin/console/').expect(503);
        expect(res.body.message).toMatch(/not built: run `npm run build`/);
        await request(app.getHttpServer()).get('/admin/console/config.json').expect(200);
      } finally {
        roots.mockRestore();
        await app.close();
      }
    });

    it('finds the console built beside the package by default', async () => {
      expect(consoleBuild.roots().some((dir) => resolveConsoleOptions({}, [dir]).root !== null)).toBe(true);
    });

    it('is not served unless asked for', async () => {
      const app = await boot(false);
      try {
        await request(app.getHttpServer()).get('/admin/console/').expect(404);
        await request(app.getHttpServer()).get('/admin/console/config.json').expect(404);
      } finally {
        await app.close();
      }
    });
  });
});
