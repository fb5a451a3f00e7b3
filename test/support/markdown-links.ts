import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, posix, relative, sep } from 'node:path';

/**
 * The relative links of Markdown files and the anchors GitHub gives their headings, so that a test can tell that every
 * link of the documents lands on a file of the repository and, with an `#anchor`, on a heading of that file.
 */

/** One link of a Markdown file: where it stands and what it points at. */
export interface MarkdownLink {
  /** The Markdown file, relative to the repository root (with `/`). */
  readonly file: string;
  /** The 1-based line of the link. */
  readonly line: number;
  /** The target as written: `docs/x.md#a`, `#a`, `../load/memory.svg`. */
  readonly target: string;
}

const FENCE = /^\s*(`{3,}|~{3,})/;

/**
 * The lines of `text` outside fenced code blocks, with their 1-based numbers: `raw` as written, `prose` with its inline
 * code spans blanked out (a link written as code is no link).
 */
function proseLines(text: string): Array<{ line: number; raw: string; prose: string }> {
  const out: Array<{ line: number; raw: string; prose: string }> = [];
  let fence: string | null = null;
  text.split(/\r?\n/).forEach((raw, i) => {
    const open = FENCE.exec(raw);
    if (open) {
      const trimmed = raw.trim();
      if (fence === null) fence = open[1];
      else if (trimmed[0] === fence[0] && /^(`+|~+)$/.test(trimmed) && trimmed.length >= fence.length) fence = null;
      return;
    }
    if (fence !== null) return;
    out.push({ line: i + 1, raw, prose: raw.replace(/(`+)(?:(?!\1).)+?\1/g, (m) => ' '.repeat(m.length)) });
  });
  return out;
}

/** Inline links and images, `[text](target "title")` and `![alt](<target>)`, and reference definitions `[x]: target`. */
const INLINE = /!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]*)>?(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/g;
const DEFINITION = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$/;

/** Every link of a Markdown file's text, in order. */
export function markdownLinks(file: string, text: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  for (const { line, prose } of proseLines(text)) {
    const definition = DEFINITION.exec(prose);
    if (definition) links.push({ file, line, target: definition[1] });
    for (const m of prose.matchAll(INLINE)) links.push({ file, line, target: m[1] });
  }
  return links;
}

/** A link that leaves the repository's files: a URL with a scheme (`https:`, `mailto:`) or one starting with `//`. */
export function isExternal(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//');
}

/**
 * The anchor GitHub gives a heading's text: its rendered text (code spans, emphasis and links reduced to their text)
 * lower-cased, every character that is not a letter, a digit, a mark, a space, `-` or `_` dropped, spaces turned to
 * `-`. (github-slugger, which github.com uses.)
 */
export function githubSlug(heading: string): string {
  const rendered = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/`/g, '')
    .replace(/\*+/g, '')
    .replace(/(^|[^\p{L}\p{N}])_+([^_]+?)_+(?=[^\p{L}\p{N}]|$)/gu, '$1$2');
  return rendered
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

const HEADING = /^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/;

/** The anchors of a Markdown file's headings, in order: a repeated slug gets `-1`, `-2`, ... as on GitHub. */
export function headingAnchors(text: string): string[] {
  const occurrences = new Map<string, number>();
  const anchors: string[] = [];
  for (const { raw } of proseLines(text)) {
    const heading = HEADING.exec(raw);
    if (!heading) continue;
    // github-slugger's rule for a repeated slug.
    const base = githubSlug(heading[1]);
    let slug = base;
    while (occurrences.has(slug)) {
      occurrences.set(base, occurrences.get(base)! + 1);
      slug = `${base}-${occurrences.get(base)}`;
    }
    occurrences.set(slug, 0);
    anchors.push(slug);
  }
  return anchors;
}

/** What is wrong with one link, or null when it lands. */
export interface LinkProblem {
  readonly at: string;
  readonly target: string;
  readonly problem: string;
}

/**
 * Checks every relative link of `files` (Markdown, relative to `root`): its path must name a file or folder of the
 * repository (inside `root`, not under node_modules, dist or coverage; `allowMissing` names files the tests write that
 * git ignores), and its `#anchor`, on a Markdown file, a heading of that file.
 */
export function checkLinks(root: string, files: readonly string[], allowMissing: ReadonlySet<string> = new Set()): LinkProblem[] {
  const problems: LinkProblem[] = [];
  const anchorsOf = new Map<string, string[]>();
  const anchors = (file: string) => {
    if (!anchorsOf.has(file)) anchorsOf.set(file, headingAnchors(readFileSync(join(root, file), 'utf8')));
    return anchorsOf.get(file)!;
  };
  for (const file of files) {
    for (const link of markdownLinks(file, readFileSync(join(root, file), 'utf8'))) {
      if (isExternal(link.target)) continue;
      const at = `${file}:${link.line}`;
      const hash = link.target.indexOf('#');
      const path = decodeURIComponent(hash < 0 ? link.target : link.target.slice(0, hash));
      const anchor = hash < 0 ? null : decodeURIComponent(link.target.slice(hash + 1));
      const resolved =
        path === '' ? file : toPosix(relative(root, normalize(join(root, path.startsWith('/') ? '.' : dirname(file), path))));
      if (resolved.startsWith('..') || resolved.startsWith('/')) {
        problems.push({ at, target: link.target, problem: 'points outside the repository' });
        continue;
      }
      if (/(^|\/)(node_modules|dist|coverage)(\/|$)/.test(resolved)) {
        problems.push({ at, target: link.target, problem: 'points into a folder that is not part of the repository' });
        continue;
      }
      if (!existsSync(join(root, resolved))) {
        if (!allowMissing.has(resolved)) problems.push({ at, target: link.target, problem: `no such file: ${resolved}` });
        continue;
      }
      if (anchor === null || anchor === '') continue;
      if (statSync(join(root, resolved)).isDirectory() || !resolved.endsWith('.md')) {
        problems.push({ at, target: link.target, problem: `an anchor on ${resolved}, which is no Markdown file` });
        continue;
      }
      if (!anchors(resolved).includes(anchor))
        problems.push({ at, target: link.target, problem: `no heading of ${resolved} has the anchor #${anchor}` });
    }
  }
  return problems;
}

function toPosix(path: string): string {
  return path.split(sep).join(posix.sep);
}
