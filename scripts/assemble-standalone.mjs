// Assembles the server image's application folder from a standalone build (`TUNEBOARD_STANDALONE=1 npm run build`,
// see next.config.mjs): `node scripts/assemble-standalone.mjs <out>`. Used by the Dockerfile's build stage.
//
// Next's file tracing covers what its own server bundle imports, but not what Tuneboard loads by path at run time
// (all relative to the working directory, which the standalone server.js sets to its own folder):
// - the bundles scripts/build-worker.mjs writes to .tuneboard/ (training worker, inference, embedded-database and
//   body-parsing threads), started with `new Worker(path)` / `fork(path)`, and the packages they import
//   (packages: 'external': PGlite with its WASM and data files, the tokenizers, jinja, pino, zod…);
// - lib/db/migrations (applied at start), config/ (base models, security headers) and models/ (the built-in
//   model's weights, read by the training worker and the inference threads);
// - .next/static and public/, which Next leaves out of the standalone folder on purpose (a CDN may serve them).
// The .tuneboard bundles are traced here with the same tracer Next uses (@vercel/nft, shipped inside next).
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { nodeFileTrace } = require('next/dist/compiled/@vercel/nft');

const root = process.cwd();
const out = path.resolve(process.argv[2] ?? '');
if (!process.argv[2]) throw new Error('usage: node scripts/assemble-standalone.mjs <output folder>');
const distDir = process.env.NEXT_DIST_DIR || '.next';
const standalone = path.join(root, distDir, 'standalone');
if (!fs.existsSync(path.join(standalone, 'server.js'))) {
  throw new Error(`${standalone}/server.js is missing: build with TUNEBOARD_STANDALONE=1 first`);
}

fs.rmSync(out, { recursive: true, force: true });
fs.cpSync(standalone, out, { recursive: true, verbatimSymlinks: true });
const copy = (rel, to = rel) => {
  const from = path.join(root, rel);
  if (!fs.existsSync(from)) throw new Error(`${rel} is missing`);
  fs.cpSync(from, path.join(out, to), { recursive: true, verbatimSymlinks: true });
};
copy(path.join(distDir, 'static'));
if (fs.existsSync(path.join(root, 'public'))) copy('public');
copy('lib/db/migrations');
copy('config');
copy('models');

const bundles = fs
  .readdirSync(path.join(root, '.tuneboard'))
  .filter((f) => f.endsWith('.mjs'))
  .map((f) => path.join('.tuneboard', f));
if (bundles.length < 4) throw new Error('.tuneboard/ lacks the bundles: run node scripts/build-worker.mjs first');
const { fileList, warnings } = await nodeFileTrace(bundles, { base: root, processCwd: root });
let added = 0;
for (const rel of [...fileList].sort()) {
  const target = path.join(out, rel);
  if (fs.existsSync(target)) continue;
  const source = path.join(root, rel);
  const stat = fs.lstatSync(source);
  if (stat.isDirectory()) continue;
  fs.mkdirSync(path.dirname(target), { recursive: true });
  if (stat.isSymbolicLink()) fs.symlinkSync(fs.readlinkSync(source), target);
  else fs.copyFileSync(source, target);
  added++;
}
for (const w of warnings) if (!/Failed to resolve dependency/.test(String(w))) console.warn(`trace: ${w}`);
console.log(`assembled ${out}: standalone server + ${bundles.length} bundles, ${added} traced files added`);
