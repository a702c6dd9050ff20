#!/usr/bin/env node
// CI's lockfile check: after `npm install`, every package npm actually installed on this machine must be the
// version the committed package-lock.json pins. Comparing the file's bytes instead fails whenever the registry
// starts serving another platform's optional builds (darwin, win32, wasm32…): npm then adds entries this
// machine never installs, although nothing that runs here changed. node_modules/.package-lock.json is npm's
// own record of what it installed, so it is the list we hold against the committed lockfile.
//
// Usage: node scripts/check-lockfile.mjs [committed-lockfile]   (default: package-lock.json as in git HEAD)
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

const committedText = process.argv[2]
  ? fs.readFileSync(process.argv[2], 'utf8')
  : execFileSync('git', ['show', 'HEAD:package-lock.json'], { encoding: 'utf8', maxBuffer: 64 << 20 });
const committed = JSON.parse(committedText).packages ?? {};
const installed = JSON.parse(fs.readFileSync('node_modules/.package-lock.json', 'utf8')).packages ?? {};
const manifest = JSON.parse(fs.readFileSync('package.json', 'utf8'));

const problems = [];
for (const [path, entry] of Object.entries(installed)) {
  if (!path.startsWith('node_modules/') || entry.link) continue;
  const pinned = committed[path];
  if (!pinned) problems.push(`${path}@${entry.version} is installed but not in the committed lockfile`);
  else if (pinned.version !== entry.version)
    problems.push(`${path}: installed ${entry.version}, lockfile pins ${pinned.version}`);
}
// The root entry records package.json's ranges: a dependency added to package.json without a lockfile update
// shows up here even before anything is installed for it.
const root = committed[''] ?? {};
for (const field of ['dependencies', 'devDependencies', 'optionalDependencies', 'overrides']) {
  const want = JSON.stringify(manifest[field] ?? {});
  const have = JSON.stringify(root[field] ?? {});
  if (field !== 'overrides' && want !== have)
    problems.push(`package.json ${field} differ from the lockfile's root entry`);
}

if (problems.length > 0) {
  console.error('package-lock.json does not match what npm installed; run `npm install` and commit the lockfile:');
  for (const p of problems.slice(0, 40)) console.error(`  ${p}`);
  if (problems.length > 40) console.error(`  … and ${problems.length - 40} more`);
  process.exit(1);
}
console.log(`lockfile ok: ${Object.keys(installed).length - 1} installed packages match package-lock.json`);
