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

/** Whether a declaration is one of ours (a library's sources), not a dependency's or the standard library's. */
const isOurs = (decl: ts.Declaration) => {
  const file = decl.getSourceFile().fileName;
  return file.startsWith(join(ROOT, 'libs')) && !file.includes('node_modules');
};

/**
 * The types of ours that the public declarations name but no public entry exports, with a public name that reaches
 * each: an application cannot name them, and its own declaration emit (Nest's tsconfig has `declaration: true`) fails
 * with TS2883 on an inferred type that holds one. Every type a public signature reaches must be exported.
 */
export function forgottenTypes(checker: ts.TypeChecker, roots: ts.Symbol[], exported: ReadonlySet<string>): Map<string, string> {
  const forgotten = new Map<string, string>();
  const seen = new Set<ts.Symbol>();
  const resolve = (symbol: ts.Symbol) => (symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol);
  const visitSymbol = (symbol: ts.Symbol | undefined, from: string): void => {
    if (!symbol) return;
    symbol = resolve(symbol);
    if (seen.has(symbol)) return;
    const decls = (symbol.declarations ?? []).filter(isOurs);
    if (!decls.length) return;
    if (!(symbol.flags & (ts.SymbolFlags.Type | ts.SymbolFlags.Class | ts.SymbolFlags.Value))) return;
    seen.add(symbol);
    const isTopLevel = decls.some(
      (d) => ts.isSourceFile(d.parent) || (ts.isVariableDeclarationList(d.parent) && ts.isSourceFile(d.parent.parent.parent)),
    );
    if (!isTopLevel) return;
    if (!exported.has(symbol.name)) forgotten.set(symbol.name, from);
    for (const d of decls) visitNode(d, from);
  };
  const visitType = (type: ts.Type, from: string, depth = 0): void => {
    if (depth > 3) return;
    if (type.aliasSymbol) visitSymbol(type.aliasSymbol, from);
    else if (type.symbol && !(type.symbol.flags & ts.SymbolFlags.TypeLiteral) && !(type.symbol.flags & ts.SymbolFlags.ObjectLiteral))
      visitSymbol(type.symbol, from);
    for (const arg of type.aliasTypeArguments ?? []) visitType(arg, from, depth + 1);
    if (type.isUnionOrIntersection()) for (const t of type.types) visitType(t, from, depth + 1);
    if (type.flags & ts.TypeFlags.Object && (type.symbol?.flags ?? 0) & (ts.SymbolFlags.TypeLiteral | ts.SymbolFlags.ObjectLiteral))
      for (const prop of type.getProperties()) {
        const decl = prop.valueDeclaration ?? prop.declarations?.[0];
        if (decl) visitType(checker.getTypeOfSymbolAtLocation(prop, decl), from, depth + 1);
      }
    const ref = type as ts.TypeReference;
    if (ref.target && ref.typeArguments) for (const t of checker.getTypeArguments(ref)) visitType(t, from, depth + 1);
    for (const sig of type.getCallSignatures()) visitType(sig.getReturnType(), from, depth + 1);
  };
  const visitTypeNode = (node: ts.Node, from: string): void => {
    if (ts.isTypeReferenceNode(node) || ts.isExpressionWithTypeArguments(node)) {
      const target = ts.isTypeReferenceNode(node) ? node.typeName : node.expression;
      visitSymbol(checker.getSymbolAtLocation(ts.isQualifiedName(target) ? target.right : target), from);
    } else if (ts.isTypeQueryNode(node)) {
      visitSymbol(checker.getSymbolAtLocation(ts.isQualifiedName(node.exprName) ? node.exprName.right : node.exprName), from);
    }
    // In a type, a function's parameters are inputs: only its return type is read.
    if (ts.isFunctionTypeNode(node) || ts.isMethodSignature(node) || ts.isCallSignatureDeclaration(node)) {
      if (node.type) visitTypeNode(node.type, from);
      return;
    }
    ts.forEachChild(node, (child) => visitTypeNode(child, from));
  };
  /** What a caller gets: the written or inferred type of an output position. */
  const visitOutput = (typeNode: ts.TypeNode | undefined, inferred: () => ts.Type | undefined, from: string) => {
    if (typeNode) visitTypeNode(typeNode, from);
    else {
      const type = inferred();
      if (type) visitType(type, from);
    }
  };
  // Only what a caller receives (results, public fields, what a type holds) must be nameable: an application's declaration
  // emit names the types it infers from those. Parameters and options are inputs, written by the caller.
  const visitNode = (node: ts.Node, from: string): void => {
    if (ts.isClassDeclaration(node)) {
      for (const h of node.heritageClauses ?? []) for (const t of h.types) visitTypeNode(t, from);
      for (const m of node.members) {
        if (!isPublicMember(m) || ts.isConstructorDeclaration(m)) continue;
        if (ts.isMethodDeclaration(m) || ts.isGetAccessorDeclaration(m))
          visitOutput(m.type, () => checker.getSignatureFromDeclaration(m)?.getReturnType(), from);
        else if (ts.isPropertyDeclaration(m)) visitOutput(m.type, () => checker.getTypeAtLocation(m), from);
      }
    } else if (ts.isFunctionDeclaration(node)) {
      visitOutput(node.type, () => checker.getSignatureFromDeclaration(node)?.getReturnType(), from);
    } else if (ts.isVariableDeclaration(node)) {
      visitOutput(node.type, () => checker.getTypeAtLocation(node), from);
    } else if (ts.isInterfaceDeclaration(node)) {
      for (const h of node.heritageClauses ?? []) for (const t of h.types) visitTypeNode(t, from);
      for (const m of node.members) visitTypeNode(m, from);
    } else if (ts.isTypeAliasDeclaration(node)) {
      visitTypeNode(node.type, from);
    }
  };
  for (const root of roots) {
    const symbol = resolve(root);
    seen.add(symbol);
    for (const d of (symbol.declarations ?? []).filter(isOurs)) visitNode(d, root.name);
  }
  return forgotten;
}

/** The report of each package, by its short name, and the distinct names of all entry points. */
export function buildReports(): {
  reports: Map<string, string>;
  names: Set<string>;
  perEntry: Map<string, number>;
  forgotten: Map<string, string>;
} {
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
  const roots: ts.Symbol[] = [];
  const pkgOf = new Map<string, string>();
  for (const entry of entries) {
    const sf = program.getSourceFile(entry.file);
    const moduleSymbol = sf && checker.getSymbolAtLocation(sf);
    if (!moduleSymbol) throw new Error(`${relative(ROOT, entry.file)}: not a module`);
    const exports = checker.getExportsOfModule(moduleSymbol).sort((a, b) => a.name.localeCompare(b.name, 'en'));
    perEntry.set(entry.specifier, exports.length);
    for (const e of exports) names.add(e.name);
    roots.push(...exports);
    for (const e of exports) if (!pkgOf.has(e.name)) pkgOf.set(e.name, entry.pkg);
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
  const forgotten = forgottenTypes(checker, roots, names);
  for (const [pkg, lines] of byPkg) {
    const reached = [...forgotten].filter(([, from]) => pkgOf.get(from) === pkg).sort(([a], [b]) => a.localeCompare(b, 'en'));
    if (!reached.length) continue;
    lines.push('## Reached, not exported', '');
    lines.push('Types that a result or a public field of this package holds but no entry point exports: an application cannot');
    lines.push("name them (`AgentRunResult['steps'][number]` reaches one), and its declaration emit may not infer them (TS2883).", '');
    lines.push(...reached.map(([name, from]) => `- \`${name}\` (from \`${from}\`)`), '');
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
  return { reports, names, perEntry, forgotten };
}

if (require.main === module) {
  const check = process.argv.includes('--check');
  const { reports, names, forgotten } = buildReports();
  process.stderr.write(`${forgotten.size} types reached but not exported (listed in the reports)\n`);
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
