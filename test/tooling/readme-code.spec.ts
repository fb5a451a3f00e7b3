import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BlockProblem, CodeBlock, compileBlocks, markdownFiles, typescriptBlocks, YOUR_APPLICATION } from '../support/markdown-code';

const ROOT = join(__dirname, '..', '..');

/** The sample application's sources (not its specs), relative to the root. */
function sampleFiles(): string[] {
  const dir = join(ROOT, 'apps', 'sample', 'src');
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !/\.(spec|e2e-spec|db-spec)\.ts$/.test(f))
    .map((f) => join('apps', 'sample', 'src', f))
    .sort();
}

const blocksOf = (file: string): CodeBlock[] => typescriptBlocks(file, readFileSync(join(ROOT, file), 'utf8'));

/** The guide's first @Skill example (docs/skills-and-policies.md) as a new user copied it (the type imported as a value), the same fixed, two fragments. */
const PROBE = [
  '# Skills',
  '',
  '```ts',
  "import { Injectable } from '@nestjs/common';",
  "import { Skill, SkillInvocation } from '@zmodu/skills';",
  '',
  '@Injectable()',
  'export class TradingSkills {',
  "  @Skill({ name: 'order.draft', action: 'propose', description: 'Draft an order.' })",
  '  async draft(args: { symbol: string }, ctx: SkillInvocation) {',
  '    return { symbol: args.symbol, tenant: ctx.tenantId };',
  '  }',
  '}',
  '```',
  '',
  '```typescript',
  "import { Injectable } from '@nestjs/common';",
  "import { Skill, type SkillInvocation } from '@zmodu/skills';",
  '',
  '@Injectable()',
  'export class TradingSkills {',
  "  @Skill({ name: 'order.draft', action: 'propose', description: 'Draft an order.' })",
  '  async draft(args: { symbol: string }, ctx: SkillInvocation) {',
  '    return { symbol: args.symbol, tenant: ctx.tenantId };',
  '  }',
  '}',
  '```',
  '',
  '- In a list:',
  '',
  '  ```ts fragment',
  "  @Skill({ name: 'order.cancel', description: 'Cancel an order.' })",
  '  async cancel(args: { id: string }) {}',
  '  ```',
  '',
  '```ts fragment',
  'const broken = ;',
  '```',
].join('\n');

describe('TypeScript blocks of the Markdown files', () => {
  jest.setTimeout(300_000);
  let documents: CodeBlock[];
  let problems: BlockProblem[];

  beforeAll(() => {
    documents = markdownFiles(ROOT).flatMap(blocksOf);
    // One program for every block (the libraries are read once): the documents' and the probe's.
    problems = compileBlocks(ROOT, [...documents, ...typescriptBlocks('docs/probe.md', PROBE)], YOUR_APPLICATION, sampleFiles());
  });

  it('takes the Markdown files at the root (README, CONTRIBUTING.md) and every one under docs/, its subfolders too, none of node_modules', () => {
    const files = markdownFiles(ROOT);
    expect(files).toEqual(
      expect.arrayContaining(['README.md', 'CONTRIBUTING.md', 'docs/getting-started.md', 'docs/development/benchmarks.md']),
    );
    expect(files.filter((f) => f.includes('node_modules') || (f.includes('/') && !f.startsWith('docs/')))).toEqual([]);
    // The README's first app; the guide's examples are in docs/.
    expect(documents.filter((b) => b.file === 'README.md').length).toBeGreaterThanOrEqual(1);
    expect(documents.filter((b) => b.file.startsWith('docs/')).length).toBeGreaterThan(30);
  });

  it('compiles every block as a default `nest new` project compiles it (isolatedModules, emitDecoratorMetadata, strict), fragments parsed only', () => {
    const found = problems
      .filter((p) => !p.at.startsWith('docs/probe.md:') && !p.at.startsWith('apps/'))
      .map((p) => `${p.at}: TS${p.code}: ${p.message}`);
    expect(found).toEqual([]);
    // Fragments are few: each one is code that cannot be whole where it stands.
    expect(documents.filter((b) => b.fragment).map((b) => `${b.file}:${b.line}`).length).toBeLessThanOrEqual(3);
  });

  it('compiles the sample application the docs point at as code to copy under the same options (no TS1272 in a nest new project)', () => {
    expect(sampleFiles().length).toBeGreaterThan(20);
    expect(problems.filter((p) => p.at.startsWith('apps/')).map((p) => `${p.at}: TS${p.code}: ${p.message}`)).toEqual([]);
  });

  it("reports the guide's first @Skill example as a new user copied it, at its line, and a broken fragment (attack: TS1272 under isolatedModules)", () => {
    expect(typescriptBlocks('docs/probe.md', PROBE).map((b) => [b.line, b.fragment])).toEqual([
      [4, false],
      [17, false],
      [32, true],
      [37, true],
    ]);
    // The fixed copy (import type) and the class-member fragment are fine.
    expect(problems.filter((p) => p.at.startsWith('docs/probe.md:'))).toEqual([
      {
        at: 'docs/probe.md:10',
        code: 1272,
        message: expect.stringMatching(/imported with 'import type' or a namespace import when 'isolatedModules'/),
      },
      { at: 'docs/probe.md:37', code: 1109, message: 'Expression expected.' },
    ]);
  });
});
