import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Every `§` citation in the repository names a document in docs/ and a section that exists there, so a
 * reader of a clone can follow each comment. Citations look like `docs/contract.md §8.2` (or
 * `docs/architecture.md §3`); a bare `§N` later on the same line cites the same document. `§a.b.c` is item c
 * of the numbered list in section a.b. Old citations of documents outside the repository fail.
 */
const ROOT = path.join(import.meta.dirname, '..', '..');
const DOCS = ['contract.md', 'architecture.md', 'tinker.md'];
const SKIP = new Set([
  'node_modules',
  '.next',
  '.data',
  '.git',
  'docs',
  'migrations',
  'test-results',
  'playwright-report',
  '.tuneboard',
]);
const EXT = /\.(ts|tsx|mts|mjs|js|md|py|sh|css)$/;

interface Doc {
  sections: Set<string>;
  /** The numbered list items under each section heading. */
  items: Map<string, Set<string>>;
}

function readDoc(file: string): Doc {
  const sections = new Set<string>();
  const items = new Map<string, Set<string>>();
  let current: string | null = null;
  for (const line of fs.readFileSync(path.join(ROOT, 'docs', file), 'utf8').split('\n')) {
    const heading = /^#{2,4} (\d+(?:\.\d+)*)\.? /.exec(line);
    if (heading) {
      current = heading[1];
      sections.add(current);
      items.set(current, new Set());
      continue;
    }
    const item = /^\s*(\d+)\. /.exec(line);
    if (item && current) items.get(current)!.add(item[1]);
  }
  return { sections, items };
}

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    // Virtual environments and Python build output hold other projects' files (their § are not ours).
    if (
      SKIP.has(entry.name) ||
      entry.name.startsWith('.venv') ||
      entry.name.endsWith('.egg-info') ||
      entry.name === '__pycache__'
    )
      continue;
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) sourceFiles(file, out);
    else if (EXT.test(entry.name)) out.push(file);
  }
  return out;
}

const CITATION = /(?:(docs\/(?:contract|architecture|tinker)\.md)\s+)?§\s?(\d+(?:\.\d+)*)(?:[–-](\d+(?:\.\d+)*))?/g;

function exists(doc: Doc, num: string): boolean {
  if (doc.sections.has(num)) return true;
  const parts = num.split('.');
  const parent = parts.slice(0, -1).join('.');
  return parts.length > 2 && doc.items.get(parent)?.has(parts.at(-1)!) === true;
}

describe('citations', () => {
  const docs = new Map(DOCS.map((d) => [`docs/${d}`, readDoc(d)]));

  it('the documents have numbered sections', () => {
    expect(docs.get('docs/contract.md')!.sections.size).toBeGreaterThan(40);
    expect(docs.get('docs/architecture.md')!.sections.has('3')).toBe(true);
  });

  it('every § in the repository cites an existing section of docs/', () => {
    const problems: string[] = [];
    for (const file of sourceFiles(ROOT)) {
      const rel = path.relative(ROOT, file);
      const lines = fs.readFileSync(file, 'utf8').split('\n');
      lines.forEach((line, i) => {
        if (!line.includes('§')) return;
        const where = `${rel}:${i + 1}`;
        if (/(compat(-reference)?|spec|ARCHITECTURE)(\.md)?\s+§/.test(line)) {
          problems.push(`${where}: cites a document outside the repository: ${line.trim()}`);
          return;
        }
        let doc: string | null = null;
        for (const m of line.matchAll(CITATION)) {
          doc = m[1] ?? doc;
          if (!doc) {
            problems.push(`${where}: "§${m[2]}" names no document (write docs/contract.md §${m[2]})`);
            continue;
          }
          for (const num of [m[2], m[3]].filter((n): n is string => n !== undefined)) {
            if (!exists(docs.get(doc)!, num)) problems.push(`${where}: ${doc} has no §${num}`);
          }
        }
      });
    }
    expect(problems).toEqual([]);
  });
});
