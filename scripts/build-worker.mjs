// Bundles the code that runs outside Next's server bundle: the training worker process
// (lib/jobs/worker/worker-main.ts), the inference worker threads (lib/inference/worker-thread.ts), the embedded
// database's thread (lib/db/pglite-thread.ts), the thread that parses large bodies (lib/body/thread.ts), the one
// that validates uploaded datasets (lib/body/sft-lines-thread.ts) and the one that writes GGUF downloads of Hugging Face
// checkpoints (lib/export/thread.ts). Run by `npm run build`, `npm run dev` and the
// Vitest global setup; takes well under a second.
import { build } from 'esbuild';

const common = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  sourcemap: true,
  alias: { '@': '.' },
  logLevel: 'warning',
};

await Promise.all([
  build({ ...common, entryPoints: ['lib/jobs/worker/worker-main.ts'], outfile: '.tuneboard/worker.mjs' }),
  build({ ...common, entryPoints: ['lib/inference/worker-thread.ts'], outfile: '.tuneboard/inference-worker.mjs' }),
  build({ ...common, entryPoints: ['lib/db/pglite-thread.ts'], outfile: '.tuneboard/pglite-worker.mjs' }),
  build({ ...common, entryPoints: ['lib/body/thread.ts'], outfile: '.tuneboard/body-worker.mjs' }),
  build({ ...common, entryPoints: ['lib/body/sft-lines-thread.ts'], outfile: '.tuneboard/sft-lines-worker.mjs' }),
  build({ ...common, entryPoints: ['lib/export/thread.ts'], outfile: '.tuneboard/gguf-worker.mjs' }),
]);
console.log('built .tuneboard/{worker,inference-worker,pglite-worker,body-worker,sft-lines-worker,gguf-worker}.mjs');
