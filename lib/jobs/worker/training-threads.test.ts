import path from 'node:path';
import v8 from 'node:v8';
import { describe, expect, it } from 'vitest';
import { loadBaseModel } from '@/lib/engine/base-models';
import { copyWeightsOut } from '@/lib/engine/train/flat';
import { trainSft, type SftStepMetrics } from '@/lib/engine/train/sft';
import { SftHelperThread } from './training-threads';

v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

const examples = ['sky?:blue', 'grass?:green', 'snow?:white', 'coal?:black', 'sun?:yellow', 'sea?:teal'].map((p, i) => {
  const [q, a] = p.split(':');
  return {
    line: i + 1,
    messages: [
      { role: 'user', content: q },
      { role: 'assistant', content: a },
    ],
  };
});

async function run(helper: SftHelperThread | null) {
  const { model, tokenizer } = loadBaseModel('tuneboard/tiny-random', null);
  const steps: SftStepMetrics[] = [];
  await trainSft(model, tokenizer, examples, {
    batchSize: 3,
    learningRate: 1e-3,
    assistantTurns: 'all',
    onStep: (m) => void steps.push(m),
    ...(helper ? { helper } : {}),
  });
  const weights = copyWeightsOut(model);
  model.release();
  return { steps, weights };
}

describe('SftHelperThread', () => {
  it('computes half of each batch on a real worker thread (the worker script re-entered) with the same result', async () => {
    const { spec } = loadBaseModel('tuneboard/tiny-random', null);
    const helper = SftHelperThread.create(spec.config, path.resolve('lib/jobs/worker/worker-main.ts'));
    expect(helper).not.toBeNull();
    try {
      const two = await run(helper);
      const one = await run(null);
      two.steps.forEach((s, i) => expect(s.loss).toBeCloseTo(one.steps[i].loss, 4));
      let maxDiff = 0;
      one.weights.forEach((w, i) => (maxDiff = Math.max(maxDiff, Math.abs(w - two.weights[i]))));
      expect(maxDiff).toBeLessThan(1e-4);
    } finally {
      await helper?.close();
    }
  });

  it('is off without a script (in-process runners, tests) or with TUNEBOARD_TRAIN_THREADS=1', () => {
    const { spec } = loadBaseModel('tuneboard/tiny-random', null);
    expect(SftHelperThread.create(spec.config, null)).toBeNull();
    process.env.TUNEBOARD_TRAIN_THREADS = '1';
    try {
      expect(SftHelperThread.create(spec.config, 'x.js')).toBeNull();
    } finally {
      delete process.env.TUNEBOARD_TRAIN_THREADS;
    }
  });
});
