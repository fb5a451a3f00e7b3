import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildReports, MAX_PUBLIC_NAMES, publicEntries } from '../../scripts/api-report';

const ROOT = join(__dirname, '..', '..');

describe('the API reports (etc/<package>.api.md)', () => {
  const { reports, names, perEntry } = buildReports();

  it.each([...reports.keys()])('etc/%s.api.md is what the entry points export now (else: npm run api, and review the diff)', (pkg) => {
    const file = join(ROOT, 'etc', `${pkg}.api.md`);
    expect(readFileSync(file, 'utf8')).toBe(reports.get(pkg));
  });

  it(`keeps the public surface to at most ${MAX_PUBLIC_NAMES} names, and leaves the internal entries out of it`, () => {
    expect(names.size).toBeLessThanOrEqual(MAX_PUBLIC_NAMES);
    expect(names.size).toBeGreaterThan(100);
    const specifiers = publicEntries().map((e) => e.specifier);
    expect(specifiers).toContain('@zmodu/agent');
    expect(specifiers).toContain('@zmodu/guard/testing');
    expect(specifiers.filter((s) => s === '@zmodu/core' || s.endsWith('/internal'))).toEqual([]);
    expect([...perEntry.keys()].sort()).toEqual([...specifiers].sort());
  });

  it('names ZmoduError in every package, and no internal helper', () => {
    for (const [pkg, text] of reports) {
      expect([pkg, text.includes('class ZmoduError extends Error')]).toEqual([pkg, true]);
      for (const helper of ['ownOptions', 'canonicalJson', 'queryRows', 'isDatabaseUnavailable'])
        expect([pkg, helper, new RegExp(`^(function|const) ${helper}\\b`, 'm').test(text)]).toEqual([pkg, helper, false]);
    }
  });
});
