import { execFileSync } from 'node:child_process';

/** Worker threads load esbuild bundles; build them once before any test file runs. */
export default function setup() {
  execFileSync(process.execPath, ['scripts/build-worker.mjs'], { stdio: 'inherit' });
}
