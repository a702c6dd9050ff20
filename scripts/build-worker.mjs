// Bundles the training worker (lib/jobs/worker-main.ts) for production, so `npm start` can spawn it with
// plain node. Dependencies stay external and resolve from node_modules at run time.
import { build } from 'esbuild';

await build({
  entryPoints: ['lib/jobs/worker-main.ts'],
  outfile: '.tuneboard/worker.mjs',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  sourcemap: true,
  alias: { '@': '.' },
  logLevel: 'warning',
});
console.log('built .tuneboard/worker.mjs');
