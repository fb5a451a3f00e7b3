import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { markdownFiles } from '../support/markdown-code';
import { checkLinks, githubSlug, headingAnchors, isExternal, markdownLinks } from '../support/markdown-links';

const ROOT = join(__dirname, '..', '..');

/** Files the documents show that a test writes and git ignores, each with the spec that writes it. */
const WRITTEN_BY_TESTS: Record<string, string> = {
  'docs/screenshots/console-queue.png': 'test/console.browser-spec.ts',
  'docs/screenshots/console-proposal.png': 'test/console.browser-spec.ts',
};

const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

describe('Links of the Markdown files', () => {
  const files = markdownFiles(ROOT);

  it('reads the README, CONTRIBUTING.md and every page under docs/, its subfolders too', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'README.md',
        'CONTRIBUTING.md',
        'docs/getting-started.md',
        'docs/development/benchmarks.md',
        'docs/generated/benchmarks.md',
      ]),
    );
  });

  it('every relative link lands on a file of the repository, and every #anchor on a heading of that file', () => {
    expect(checkLinks(ROOT, files, new Set(Object.keys(WRITTEN_BY_TESTS)))).toEqual([]);
    const relativeLinks = files.flatMap((f) => markdownLinks(f, read(f))).filter((l) => !isExternal(l.target));
    expect(relativeLinks.length).toBeGreaterThan(100);
    expect(relativeLinks.filter((l) => l.target.includes('#')).length).toBeGreaterThan(50);
  });

  it('lets a link to a missing file through only for the files a test writes and git ignores', () => {
    const ignored = read('.gitignore').split('\n');
    for (const [file, spec] of Object.entries(WRITTEN_BY_TESTS)) {
      expect(ignored).toContain(`/${dirname(file)}/`);
      expect(read(spec)).toContain(basename(file));
    }
  });

  it('gives a heading the anchor GitHub gives it, with -1, -2 for a repeated one', () => {
    expect(githubSlug('The HTTP edge (@zmodu/http)')).toBe('the-http-edge-zmoduhttp');
    expect(githubSlug('Cluster mode: several instances on one PostgreSQL')).toBe('cluster-mode-several-instances-on-one-postgresql');
    expect(githubSlug("The documents' code compiles")).toBe('the-documents-code-compiles');
    expect(githubSlug('Under load: `npm run load`')).toBe('under-load-npm-run-load');
    expect(githubSlug('Data skills: db.query, entity.lookup')).toBe('data-skills-dbquery-entitylookup');
    expect(githubSlug('With @nestjs/schedule: the SchedulerRegistry and `@AgentCron`')).toBe(
      'with-nestjsschedule-the-schedulerregistry-and-agentcron',
    );
    expect(githubSlug("Readiness and shutdown (the [sample](x.md)'s **pattern**)")).toBe('readiness-and-shutdown-the-samples-pattern');
    expect(githubSlug('snake_case and __proto__ and Ünïcode')).toBe('snake_case-and-proto-and-ünïcode');
    const page = ['# A', '## Notes', '```md', '## Notes', '```', '### Notes', '## Notes-1', '## Notes #', '    not a heading'].join('\n\n');
    expect(headingAnchors(page)).toEqual(['a', 'notes', 'notes-1', 'notes-1-1', 'notes-2']);
  });

  it('reports a missing file, a missing anchor, a link out of the repository and a missing image; not a link in code or a URL', () => {
    const dir = mkdtempSync(join(tmpdir(), 'zmodu-links-'));
    try {
      mkdirSync(join(dir, 'docs'));
      writeFileSync(join(dir, 'docs', 'b.md'), '# B\n\n## Second part\n\n## Second part\n');
      writeFileSync(
        join(dir, 'docs', 'a.md'),
        [
          '# A',
          '',
          '[ok](b.md#second-part) [repeat](b.md#second-part-1) [here](#a) [self](a.md) [folder](../docs/) [root](/docs/b.md#b)',
          '[gone](c.md) [no anchor](b.md#third) [out](../../etc/passwd) ![image](img.png) ![shot](shots/x.png)',
          '`[in code](nowhere.md)` and [web](https://example.com/x.md), [mail](mailto:a@example.com)',
          '',
          '```md',
          '[fenced](nowhere.md)',
          '```',
          '',
          '[ref]: missing-ref.md',
          '[anchor on an image](img2.md#x)',
        ].join('\n'),
      );
      writeFileSync(join(dir, 'docs', 'img2.md'), 'no heading\n');
      expect(checkLinks(dir, ['docs/a.md'], new Set(['docs/shots/x.png']))).toEqual([
        { at: 'docs/a.md:4', target: 'c.md', problem: 'no such file: docs/c.md' },
        { at: 'docs/a.md:4', target: 'b.md#third', problem: 'no heading of docs/b.md has the anchor #third' },
        { at: 'docs/a.md:4', target: '../../etc/passwd', problem: 'points outside the repository' },
        { at: 'docs/a.md:4', target: 'img.png', problem: 'no such file: docs/img.png' },
        { at: 'docs/a.md:11', target: 'missing-ref.md', problem: 'no such file: docs/missing-ref.md' },
        { at: 'docs/a.md:12', target: 'img2.md#x', problem: 'no heading of docs/img2.md has the anchor #x' },
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
