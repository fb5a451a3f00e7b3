// npm run api: write etc/<package>.api.md, the public surface of each package: every name its entry points export
// (`@zmodu/<name>` and `@zmodu/<name>/testing`), with its signature as the compiler sees it. The files are checked in, so
// that every new export, and every change of a public signature, is a line a reviewer reads.
// npm run api -- --check (test/tooling/api-report.spec.ts, in npm test): fail when a report differs from the code.
// The internal entries (@zmodu/core, @zmodu/<name>/internal) are not public and not reported.
import * as ts from 'typescript';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const ROOT = join(__dirname, '..');
const ETC = join(ROOT, 'etc');
/** The most names the entry points of all packages may export together (ZmoduError, re-exported by each, counts once). */
export const MAX_PUBLIC_NAMES = 300;

interface Entry {
  readonly pkg: string;
  readonly specifier: string;
  readonly file: string;
}

interface Library {
  readonly short: string;
  readonly dir: string;
  readonly name: string;
}

/** Every public entry point: the main entry and /testing of each library but the internal @zmodu/core. */
export function publicEntries(): Entry[] {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- scripts/libraries.js is the CommonJS list of the packages
  const { libraries } = require('./libraries') as { libraries(): Library[] };
  const out: Entry[] = [];
  for (const lib of libraries()) {
    if (lib.short === 'core') continue;
    const manifest = JSON.parse(readFileSync(join(ROOT, lib.dir, 'package.json'), 'utf8')) as { exports?: Record<string, unknown> };
    for (const key of Object.keys(manifest.exports ?? { '.': true })) {
      if (key === './package.json' || key === './internal') continue;
      const sub = key === '.' ? '' : key.slice(2);
      out.push({ pkg: lib.short, specifier: sub ? `${lib.name}/${sub}` : lib.name, file: join(ROOT, lib.dir, 'src', sub, 'index.ts') });
    }
  }
  return out;
}

const FLAGS =
  ts.TypeFormatFlags.NoTruncation |
  ts.TypeFormatFlags.UseAliasDefinedOutsideCurrentScope |
  ts.TypeFormatFlags.WriteArrowStyleSignature |
  ts.TypeFormatFlags.UseFullyQualifiedType;

const printer = ts.createPrinter({ removeComments: true, newLine: ts.NewLineKind.LineFeed });

function hasModifier(node: ts.Node, kind: ts.SyntaxKind): boolean {
  return ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === kind);
}

function isPublicMember(member: ts.ClassElement): boolean {
  if (member.name && ts.isPrivateIdentifier(member.name)) return false;
  if (hasModifier(member, ts.SyntaxKind.PrivateKeyword) || hasModifier(member, ts.SyntaxKind.ProtectedKeyword)) return false;
  // `@internal` members are not part of the surface.
  return !ts.getJSDocTags(member).some((t) => t.tagName.text === 'internal');
}

/** Strip the absolute paths the checker writes for types of other files: `import("/abs/libs/x/src/y").Z` to `Z`. */
const clean = (text: string) => text.replace(/import\("[^"]*"\)\./g, '');

function describeClass(checker: ts.TypeChecker, node: ts.ClassDeclaration, name: string): string {
  const lines: string[] = [];
  const heritage = (node.heritageClauses ?? []).map((h) => ' ' + h.getText()).join('');
  lines.push(`${hasModifier(node, ts.SyntaxKind.AbstractKeyword) ? 'abstract ' : ''}class ${name}${heritage} {`);
  for (const member of node.members) {
    if (!isPublicMember(member)) continue;
    const stat = hasModifier(member, ts.SyntaxKind.StaticKeyword) ? 'static ' : '';
    const ro = hasModifier(member, ts.SyntaxKind.ReadonlyKeyword) ? 'readonly ' : '';
    if (ts.isConstructorDeclaration(member)) {
      const sig = checker.getSignatureFromDeclaration(member);
      if (sig)
        lines.push(
          `  constructor${clean(checker.signatureToString(sig, undefined, FLAGS & ~ts.TypeFormatFlags.WriteArrowStyleSignature))};`,
        );
      // Parameter properties are members too.
      for (const p of member.parameters)
        if (
          ts.isIdentifier(p.name) &&
          ts.getModifiers(p)?.some((m) => m.kind === ts.SyntaxKind.PublicKeyword || m.kind === ts.SyntaxKind.ReadonlyKeyword)
        )
          if (!hasModifier(p, ts.SyntaxKind.PrivateKeyword) && !hasModifier(p, ts.SyntaxKind.ProtectedKeyword))
            lines.push(
              `  ${hasModifier(p, ts.SyntaxKind.ReadonlyKeyword) ? 'readonly ' : ''}${p.name.text}${p.questionToken ? '?' : ''}: ${clean(checker.typeToString(checker.getTypeAtLocation(p), undefined, FLAGS))};`,
            );
      continue;
    }
    const memberName = member.name?.getText() ?? '';
    if (ts.isMethodDeclaration(member)) {
      const sig = checker.getSignatureFromDeclaration(member);
      // Overloads: the implementation (with a body, after the overloads) is not callable as written.
      if (sig && !(member.body && node.members.some((m) => m !== member && ts.isMethodDeclaration(m) && m.name?.getText() === memberName)))
        lines.push(
          `  ${stat}${memberName}${clean(checker.signatureToString(sig, undefined, FLAGS & ~ts.TypeFormatFlags.WriteArrowStyleSignature))};`,
        );
    } else if (ts.isPropertyDeclaration(member)) {
      const type = clean(checker.typeToString(checker.getTypeAtLocation(member), undefined, FLAGS));
      lines.push(`  ${stat}${ro}${memberName}${member.questionToken ? '?' : ''}: ${type};`);
    } else if (ts.isGetAccessorDeclaration(member)) {
      const type = clean(checker.typeToString(checker.getTypeAtLocation(member), undefined, FLAGS));
      lines.push(`  ${stat}get ${memberName}(): ${type};`);
    }
  }
  lines.push('}');
  return lines.join('\n');
}

function describe(checker: ts.TypeChecker, exported: ts.Symbol): string {
  const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
  const name = exported.name;
  const parts: string[] = [];
  for (const decl of symbol.declarations ?? []) {
    if (ts.isClassDeclaration(decl)) parts.push(describeClass(checker, decl, name));
    else if (ts.isFunctionDeclaration(decl)) {
      if (decl.body && (symbol.declarations ?? []).length > 1) continue; // the implementation of overloads
      const sig = checker.getSignatureFromDeclaration(decl);
      if (sig)
        parts.push(
          `function ${name}${clean(checker.signatureToString(sig, undefined, FLAGS & ~ts.TypeFormatFlags.WriteArrowStyleSignature))};`,
        );
    } else if (ts.isVariableDeclaration(decl)) {
      const type = clean(checker.typeToString(checker.getTypeOfSymbolAtLocation(symbol, decl), undefined, FLAGS));
      parts.push(`const ${name}: ${type};`);
    } else if (ts.isInterfaceDeclaration(decl) || ts.isTypeAliasDeclaration(decl) || ts.isEnumDeclaration(decl)) {
      const text = printer.printNode(ts.EmitHint.Unspecified, decl, decl.getSourceFile());
      parts.push(text.replace(/^export (declare )?/, '').replace(new RegExp(`^(interface|type|enum) ${decl.name.text}\\b`), `$1 ${name}`));
    }
  }
  if (!parts.length) parts.push(`// ${name}: ${ts.SymbolFlags[symbol.flags] ?? symbol.flags}`);
  return parts.join('\n');
}

/** The report of each package, by its short name, and the distinct names of all entry points. */
export function buildReports(): { reports: Map<string, string>; names: Set<string>; perEntry: Map<string, number> } {
  const entries = publicEntries();
  const config = ts.getParsedCommandLineOfConfigFile(
    join(ROOT, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  );
  if (!config) throw new Error('tsconfig.json could not be read');
  const program = ts.createProgram(
    entries.map((e) => e.file),
    { ...config.options, noEmit: true },
  );
  const checker = program.getTypeChecker();
  const byPkg = new Map<string, string[]>();
  const names = new Set<string>();
  const perEntry = new Map<string, number>();
  for (const entry of entries) {
    const sf = program.getSourceFile(entry.file);
    const moduleSymbol = sf && checker.getSymbolAtLocation(sf);
    if (!moduleSymbol) throw new Error(`${relative(ROOT, entry.file)}: not a module`);
    const exports = checker.getExportsOfModule(moduleSymbol).sort((a, b) => a.name.localeCompare(b.name, 'en'));
    perEntry.set(entry.specifier, exports.length);
    for (const e of exports) names.add(e.name);
    const block = [
      `## ${entry.specifier}`,
      '',
      `${exports.length} names.`,
      '',
      '```ts',
      ...exports.map((e) => describe(checker, e)),
      '```',
      '',
    ];
    byPkg.set(entry.pkg, [...(byPkg.get(entry.pkg) ?? []), ...block]);
  }
  const reports = new Map<string, string>();
  for (const [pkg, lines] of byPkg)
    reports.set(
      pkg,
      [
        `# API report of @zmodu/${pkg}`,
        '',
        '<!-- Generated by `npm run api` (scripts/api-report.ts) from the entry points. Do not edit: npm test fails when it',
        'differs from the code. A change here is a change of the public API: review it. -->',
        '',
        ...lines,
      ].join('\n'),
    );
  return { reports, names, perEntry };
}

if (require.main === module) {
  const check = process.argv.includes('--check');
  const { reports, names } = buildReports();
  const stale: string[] = [];
  if (!check) mkdirSync(ETC, { recursive: true });
  for (const [pkg, text] of reports) {
    const file = join(ETC, `${pkg}.api.md`);
    const current = existsSync(file) ? readFileSync(file, 'utf8') : null;
    if (current === text) continue;
    if (check) stale.push(relative(ROOT, file));
    else writeFileSync(file, text);
  }
  process.stderr.write(`${names.size} public names in ${reports.size} packages (at most ${MAX_PUBLIC_NAMES})\n`);
  if (stale.length) {
    process.stderr.write(`The API reports differ from the code: ${stale.join(', ')}. Run npm run api and review the diff.\n`);
    process.exit(1);
  }
  if (names.size > MAX_PUBLIC_NAMES) process.exit(1);
}
