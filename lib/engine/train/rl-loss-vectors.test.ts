import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { rlLossVectors } from './rl-loss-vectors';

// The committed vectors are what the Python worker's tests check PyTorch against. If this fails, the
// TypeScript objective changed: regenerate them (scripts/make-rl-loss-vectors.ts) and make both sides agree.
describe('shared RL loss vectors', () => {
  it('the committed fixture is what the TypeScript objective computes today', () => {
    const file = path.join(import.meta.dirname, '..', '..', '..', 'tests', 'fixtures', 'rl-loss-vectors.json');
    const committed = JSON.parse(fs.readFileSync(file, 'utf8'));
    const now = JSON.parse(JSON.stringify(rlLossVectors()));
    expect(now.row_loss).toHaveLength(64);
    expect(now).toEqual(committed);
  });
});
