import { existsSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

/**
 * The TypeScript code blocks of Markdown files, compiled as a new user's `nest new` project would compile them.
 *
 * A block is a fence whose info string starts with `ts` or `typescript`. A block marked ```` ```ts fragment ```` is
 * deliberately incomplete (a piece of a class, or code needing a package that is not installed here): it is parsed, as
 * statements, as class members or as an object's members, but not type-checked. Every other block is compiled whole,
 * in one program, each block a module of its own.
 */
export interface CodeBlock {
  /** The Markdown file, relative to the repository root. */
  readonly file: string;
  /** The line (1-based) of the block's first line of code. */
  readonly line: number;
  readonly code: string;
  readonly fragment: boolean;
}

const FENCE = /^(\s*)(`{3,}|~{3,})(.*)$/;

/** Every ```ts block of `text` (the Markdown of `file`), with its first line and whether it is marked a fragment. */
export function typescriptBlocks(file: string, text: string): CodeBlock[] {
  const lines = text.split(/\r?\n/);
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]);
    if (!open) continue;
    const [, indent, fence, info] = open;
    const words = info.trim().split(/\s+/);
    let end = i + 1;
    while (end < lines.length && !isClosing(lines[end], fence)) end++;
    if (/^(ts|typescript)$/i.test(words[0] ?? '')) {
      // A fence indented in a list item: its lines carry the same indent.
      const code = lines
        .slice(i + 1, end)
        .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l.trimStart()))
        .join('\n');
      blocks.push({ file, line: i + 2, code, fragment: words.includes('fragment') });
    }
    i = end;
  }
  return blocks;
}

function isClosing(line: string, fence: string): boolean {
  const trimmed = line.trim();
  return trimmed.length >= fence.length && trimmed[0] === fence[0] && /^(`+|~+)$/.test(trimmed);
}

const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'coverage']);

/** The Markdown files whose blocks are compiled: those at the repository root and every one under docs/ (relative paths). */
export function markdownFiles(root: string): string[] {
  const found = readdirSync(root, { withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.md'))
    .map((e) => e.name);
  const stack = existsSync(join(root, 'docs')) ? [join(root, 'docs')] : [];
  while (stack.length) {
    const dir = stack.pop()!;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory() && !SKIPPED_DIRS.has(entry.name) && !entry.name.startsWith('.')) stack.push(path);
      else if (entry.isFile() && entry.name.endsWith('.md')) found.push(relative(root, path));
    }
  }
  return found.sort();
}

/**
 * The compiler options of a default `nest new` project (its tsconfig.json: nodenext modules, isolatedModules,
 * emitDecoratorMetadata, experimentalDecorators, ES2023), at its strictest (`strict`, of which `nest new --strict` sets
 * a part; not strictPropertyInitialization, which no `nest new` sets and TypeORM entities and DTOs are written
 * without), with `@zmodu/*` resolved to this repository's libraries as the root tsconfig.json maps them.
 */
export function nestProjectOptions(root: string): ts.CompilerOptions {
  const config = ts.readConfigFile(join(root, 'tsconfig.json'), ts.sys.readFile);
  const paths = (config.config as { compilerOptions: { paths: ts.MapLike<string[]> } }).compilerOptions.paths;
  return {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    resolvePackageJsonExports: true,
    esModuleInterop: true,
    isolatedModules: true,
    emitDecoratorMetadata: true,
    experimentalDecorators: true,
    allowSyntheticDefaultImports: true,
    target: ts.ScriptTarget.ES2023,
    skipLibCheck: true,
    strict: true,
    strictPropertyInitialization: false,
    forceConsistentCasingInFileNames: true,
    noFallthroughCasesInSwitch: true,
    noEmit: true,
    baseUrl: root,
    paths,
  };
}

/** One problem of a block: where it is in the Markdown file, and the compiler's message. */
export interface BlockProblem {
  readonly at: string;
  readonly code: number;
  readonly message: string;
}

/**
 * Compile `blocks` (type-check the whole ones, parse the fragments) in one program over `root`, with `ambient` (a
 * declaration file: the names the documents take as the reader's own) beside them, and the source files `files`
 * (paths relative to `root`: code a reader copies, such as the sample application). Returns every problem, told as
 * `<file>:<line>`.
 */
export function compileBlocks(root: string, blocks: readonly CodeBlock[], ambient: string, files: readonly string[] = []): BlockProblem[] {
  const options = nestProjectOptions(root);
  const dir = join(root, '.markdown-blocks');
  const virtual = new Map<string, string>();
  const byFile = new Map<string, CodeBlock>();
  const ambientFile = join(dir, 'your-application.d.ts');
  virtual.set(ambientFile, ambient);
  for (const block of blocks) {
    if (block.fragment) continue;
    const name = join(dir, `${block.file.replace(/[^\w.-]/g, '_')}_${block.line}.ts`);
    virtual.set(name, block.code);
    byFile.set(name, block);
  }
  const host = ts.createCompilerHost(options, true);
  const { getSourceFile, fileExists, readFile } = host;
  host.getSourceFile = (name, language, onError, create) => {
    const text = virtual.get(name);
    return text !== undefined ? ts.createSourceFile(name, text, language, true) : getSourceFile.call(host, name, language, onError, create);
  };
  host.fileExists = (name) => virtual.has(name) || fileExists.call(host, name);
  host.readFile = (name) => virtual.get(name) ?? readFile.call(host, name);
  const sources = files.map((f) => join(root, f));
  const program = ts.createProgram({ rootNames: [...virtual.keys(), ...sources], options, host });

  const problems: BlockProblem[] = program.getOptionsDiagnostics().map((d) => ({ at: 'compiler options', ...describe(d) }));
  // Only the blocks' and the given files' problems: the libraries' own files are the root tsconfig's job.
  for (const name of [ambientFile, ...byFile.keys(), ...sources]) {
    const file = program.getSourceFile(name);
    if (!file) {
      problems.push({ at: relative(root, name), code: 0, message: 'not found' });
      continue;
    }
    const block = byFile.get(name);
    for (const d of [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)]) {
      const line = d.start === undefined ? 0 : file.getLineAndCharacterOfPosition(d.start).line;
      const at = block
        ? `${block.file}:${block.line + line}`
        : `${name === ambientFile ? 'your-application.d.ts' : relative(root, name)}:${line + 1}`;
      problems.push({ at, ...describe(d) });
    }
  }
  for (const block of blocks) if (block.fragment) problems.push(...fragmentProblems(block));
  return problems.sort((a, b) => a.at.localeCompare(b.at, 'en', { numeric: true }));
}

function describe(d: ts.Diagnostic): { code: number; message: string } {
  return { code: d.code, message: ts.flattenDiagnosticMessageText(d.messageText, '\n') };
}

/** A fragment parses as statements, as the members of a class, or as the members of an object; else its problems as statements. */
function fragmentProblems(block: CodeBlock): BlockProblem[] {
  const shapes = [
    { before: '', after: '' },
    { before: 'class Fragment {\n', after: '\n}' },
    { before: '({\n', after: '\n})' },
  ];
  let first: BlockProblem[] | undefined;
  for (const { before, after } of shapes) {
    const offset = before ? 1 : 0;
    const out = ts.transpileModule(`${before}${block.code}${after}`, {
      reportDiagnostics: true,
      compilerOptions: { target: ts.ScriptTarget.ES2023 },
    });
    const problems = (out.diagnostics ?? []).map((d) => ({
      at: `${block.file}:${block.line + (d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line - offset : 0)}`,
      ...describe(d),
    }));
    if (problems.length === 0) return [];
    first ??= problems;
  }
  return first ?? [];
}

/**
 * The names the documents use as the reader's own (the README says that a name an example does not import is the
 * application's), and the packages a Nest application adds that this repository does not install: declared, so that
 * a block using them is still checked against the libraries' real types.
 */
export const YOUR_APPLICATION = `
declare const myModelProvider: import('@zmodu/agent').ModelProvider;
declare const provider: import('@zmodu/agent').ModelProvider;
declare const trader: import('@zmodu/agent').AgentSpec;
declare const reporter: import('@zmodu/agent').AgentSpec;
declare const agents: import('@zmodu/agent').AgentSpec[];
declare const yourEntities: Function[];
declare const yourMigrations: Function[];
declare const entities: Function[];
declare const migrations: Function[];
declare const dataSourceOptions: import('typeorm').DataSourceOptions;
declare const DATA_ENTITIES: import('@zmodu/data').EntitySpec[];
declare class AppModule {}
declare class TradingSkills {}
declare class Order {
  id: string;
  symbol: string;
  side: 'buy' | 'sell';
  qty: number;
  limitPrice: number;
  tenantId?: string;
  userId?: string;
  status: string;
}
type OrderArgs = { symbol: string; side: 'buy' | 'sell'; qty: number; limitPrice: number };
declare const ORDER_SCHEMA: import('@zmodu/skills').JsonSchema;
declare function marketPrice(ctx: unknown, symbol: unknown): Promise<number>;
declare const myRiskReviewer: import('@zmodu/pipeline').RiskReviewer;
declare function applyOnce(eventId: string, payload: unknown): Promise<void>;
declare function freshStore(): Promise<import('@zmodu/outbox').OutboxStore>;
declare class AuthModule {}
declare class AuthConfig {
  callerOf(request: unknown): import('@zmodu/admin').AdminCaller | undefined;
}
declare const cache: import('cache-manager').Cache;
declare const refCache: import('cache-manager').Cache;
declare const users: { handle(request: unknown): Promise<unknown> };
declare const tenants: { handle(request: unknown): Promise<unknown> };
declare function isScraper(request: unknown): boolean;
declare function tenantOf(request: unknown): string;
declare function Public(): ClassDecorator;
declare module '@opentelemetry/sdk-node';
declare module '@opentelemetry/exporter-trace-otlp-http';
declare module '@nestjs/config' {
  export class ConfigModule {}
  export class ConfigService {
    get<T = any>(key: string): T;
  }
}
`;
