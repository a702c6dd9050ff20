import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { dbOnlyExcluded, NO_DATABASE_FILES } from '../db-only.mjs';

// CI's PostgreSQL pass leaves out the files tests/db-only.mjs lists. For the files it leaves out because they never
// reach the database, that must stay true: a file that starts to use it has to run on PostgreSQL too.
const root = path.resolve(import.meta.dirname, '..', '..');

/** The repository's files a test file imports, followed through its imports (packages left out). */
async function sourcesOf(file: string): Promise<string[]> {
  const result = await build({
    entryPoints: [path.join(root, file)],
    absWorkingDir: root,
    bundle: true,
    write: false,
    metafile: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    logLevel: 'silent',
    alias: { '@': root },
    outdir: 'out',
  });
  return Object.keys(result.metafile.inputs);
}

describe("the PostgreSQL pass's exclusions (tests/db-only.mjs)", () => {
  it('name files that exist', () => {
    const files = dbOnlyExcluded().filter((pattern) => !pattern.includes('*'));
    expect(files.filter((file) => !fs.existsSync(path.join(root, file)))).toEqual([]);
  });

  it('leave out as database-free only files whose imports never reach lib/db/ nor start a process', async () => {
    const reaching: string[] = [];
    for (const file of NO_DATABASE_FILES) {
      const sources = await sourcesOf(file);
      expect(sources, file).toContain(file);
      const db = sources.filter((source) => source.startsWith('lib/db/'));
      // A server or a script it starts would open DATABASE_URL's database without any import showing it.
      const starts = sources.filter((source) =>
        /\bfrom 'node:child_process'|\bnext start\b/.test(fs.readFileSync(path.join(root, source), 'utf8')),
      );
      if (db.length > 0 || starts.length > 0) reaching.push(`${file}: ${[...db, ...starts].join(', ')}`);
    }
    expect(reaching).toEqual([]);
  });
});
