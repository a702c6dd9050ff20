/**
 * Writes tests/fixtures/rl-loss-vectors.json: the RL objective's inputs and outputs from the TypeScript engine,
 * which the Python worker's tests assert too (same mathematics in both trainers). Rerun after changing
 * lib/engine/train/rl-loss.ts or rl.ts: `npx tsx scripts/make-rl-loss-vectors.ts`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { rlLossVectors } from '../lib/engine/train/rl-loss-vectors';

const out = path.join(import.meta.dirname, '..', 'tests', 'fixtures', 'rl-loss-vectors.json');
fs.writeFileSync(out, JSON.stringify(rlLossVectors()) + '\n');
console.log(`wrote ${out} (${fs.statSync(out).size} bytes)`);
