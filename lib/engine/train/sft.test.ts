import v8 from 'node:v8';
import { describe, expect, it } from 'vitest';
import { loadBaseModel } from '../base-models';
import { BUILTIN_CHAT_TEMPLATE, ChatTemplate } from '../chat-template';
import { generate } from '../generate';
import { Model } from '../model';
import { Generator } from '../random';
import { Tokenizer } from '../tokenizer';
import { WasmHeap } from '../wasm/heap';
import { copyWeightsOut } from './flat';
import {
  learningRateFor,
  sftBatchCount,
  SftShardWorker,
  splitByTokens,
  tokenizeSftExamples,
  trainSft,
  type SftStepMetrics,
} from './sft';

v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

const tok = new Tokenizer();
const tpl = new ChatTemplate(BUILTIN_CHAT_TEMPLATE);
const pairs = [
  ['sky?', 'blue'],
  ['grass?', 'green'],
  ['snow?', 'white'],
  ['coal?', 'black'],
  ['sun?', 'yellow'],
  ['blood?', 'red'],
  ['sea?', 'teal'],
  ['rose?', 'pink'],
];
const examples = pairs.map(([q, a], i) => ({
  line: i + 1,
  messages: [
    { role: 'user', content: q },
    { role: 'assistant', content: a },
  ],
}));

describe('SFT data', () => {
  it('truncates conversations longer than the context, keeping the beginning', () => {
    const long = [
      {
        line: 3,
        messages: [
          { role: 'user', content: 'x'.repeat(300) },
          { role: 'assistant', content: 'y' },
        ],
      },
    ];
    const [t] = tokenizeSftExamples(tok, long, 256, { assistantTurns: 'all' });
    expect(t.ids).toHaveLength(256);
    expect(t.truncated).toBeGreaterThan(0);
    expect(t.mask.every((m) => m === 0)).toBe(true);
  });

  it('includes tools in the rendered conversation', () => {
    const [t] = tokenizeSftExamples(
      tok,
      [
        {
          line: 1,
          messages: examples[0].messages,
          tools: [{ type: 'function', function: { name: 'paint', parameters: {} } }],
        },
      ],
      256,
      { assistantTurns: 'all' },
    );
    expect(tok.decode(t.ids)).toContain('"name": "paint"');
  });

  it('batches consecutively and repeats the last learning rate', () => {
    expect(sftBatchCount(5, 2)).toBe(3);
    expect([0, 1, 2, 3].map((b) => learningRateFor([1, 2], b))).toEqual([1, 2, 2, 2]);
    expect(learningRateFor(0.5, 9)).toBe(0.5);
  });
});

describe('trainSft', () => {
  it('reports one step per batch with the docs/contract.md §3.2 keys; loss is the mean over trainable tokens', async () => {
    const model = Model.create(
      { ...loadBaseModel('tuneboard/tiny-random', null).spec.config, n_layers: 1 },
      { seed: 4 },
    );
    const steps: SftStepMetrics[] = [];
    const data = [
      ...examples.slice(0, 3),
      {
        line: 9,
        messages: [
          { role: 'user', content: 'z'.repeat(400) },
          { role: 'assistant', content: 'cut' },
        ],
      },
    ];
    await trainSft(model, tok, data, {
      batchSize: 3,
      learningRate: [1e-3, 2e-3],
      assistantTurns: 'all',
      onStep: (m) => void steps.push(m),
    });
    expect(steps).toHaveLength(2);
    expect(steps.map((s) => s.learning_rate)).toEqual([1e-3, 2e-3]);
    // "blue", "green", "white" plus one <|im_end|> each.
    expect(steps[0]).toMatchObject({ num_trajectories: 3, num_trainable_tokens: 4 + 1 + 5 + 1 + 5 + 1 });
    expect(steps[0].loss).toBeGreaterThan(3); // near log(vocab) at init
    expect(steps[0].grad_norm).toBeGreaterThan(0);
    // The truncated example has no trainable token left: a step with no update.
    expect(steps[1]).toMatchObject({ num_trajectories: 1, num_trainable_tokens: 0, loss: 0, grad_norm: 0 });
    model.release();
  });

  it('epochs repeat the batches in order; the learning-rate list runs across epochs and may end at 0', async () => {
    const model = Model.create(
      { ...loadBaseModel('tuneboard/tiny-random', null).spec.config, n_layers: 1 },
      { seed: 4 },
    );
    const steps: SftStepMetrics[] = [];
    await trainSft(model, tok, examples.slice(0, 3), {
      batchSize: 2,
      epochs: 3,
      learningRate: [1e-3, 5e-4, 2e-4, 1e-4, 0, 0],
      assistantTurns: 'all',
      onStep: (m) => void steps.push(m),
    });
    expect(sftBatchCount(3, 2, 3)).toBe(6);
    expect(steps.map((s) => s.num_trajectories)).toEqual([2, 1, 2, 1, 2, 1]);
    expect(steps.map((s) => s.learning_rate)).toEqual([1e-3, 5e-4, 2e-4, 1e-4, 0, 0]);
    // The same examples each epoch: the first batch's loss falls from epoch to epoch.
    expect(steps[2].loss).toBeLessThan(steps[0].loss);
    model.release();
  });

  it('held-out examples are scored after each epoch: val loss and token accuracy of the current weights, never trained', async () => {
    const config = { ...loadBaseModel('tuneboard/tiny-random', null).spec.config, n_layers: 1 };
    const model = Model.create(config, { seed: 4 });
    const steps: SftStepMetrics[] = [];
    // The held-out example is one the job also trains on, so the epochs must drive its loss down and its
    // accuracy up: figures of the weights as they are after each epoch, not of the initial ones.
    await trainSft(model, tok, examples.slice(0, 2), {
      batchSize: 1,
      epochs: 15,
      learningRate: 3e-3,
      assistantTurns: 'all',
      validation: [examples[0], { line: 9, messages: [{ role: 'user', content: 'no answer' }] }],
      onStep: (m) => void steps.push(m),
    });
    const scored = steps.flatMap((s, i) => (s['val/loss'] === undefined ? [] : [i]));
    expect(scored).toEqual([1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29]);
    const first = steps[1];
    const last = steps[29];
    expect(first['val/loss']).toBeGreaterThan(1);
    expect(first['val/token_accuracy']).toBeLessThan(1);
    expect(last['val/loss']).toBeLessThan(first['val/loss']! / 4);
    // "blue" and <|im_end|>: every held-out trained token is now the greedy choice.
    // (The example without an assistant turn has no token to score, so it cannot pull the accuracy below 1.)
    expect(last['val/token_accuracy']).toBe(1);
    model.release();
  });

  it('data-parallel: a helper computing half of each batch gives the same training as one thread', async () => {
    const config = { ...loadBaseModel('tuneboard/tiny-random', null).spec.config, n_layers: 1 };
    const run = async (parallel: boolean) => {
      const model = Model.create(config, { seed: 4, heap: new WasmHeap({ prefer: 'simd' }) });
      const helperModel = Model.create(config, { seed: 99, heap: new WasmHeap({ prefer: 'simd' }) });
      const worker = new SftShardWorker(helperModel);
      const steps: SftStepMetrics[] = [];
      await trainSft(model, tok, examples, {
        batchSize: 4,
        learningRate: 1e-3,
        assistantTurns: 'all',
        onStep: (m) => void steps.push(m),
        ...(parallel ? { helper: { computeShard: async (shard) => worker.compute(shard) } } : {}),
      });
      const weights = copyWeightsOut(model);
      worker.release();
      return { steps, weights };
    };
    const one = await run(false);
    const two = await run(true);
    expect(two.steps.map((s) => s.num_trainable_tokens)).toEqual(one.steps.map((s) => s.num_trainable_tokens));
    two.steps.forEach((s, i) => {
      expect(s.loss).toBeCloseTo(one.steps[i].loss, 4);
      expect(s.grad_norm).toBeCloseTo(one.steps[i].grad_norm, 4);
    });
    let maxDiff = 0;
    one.weights.forEach((w, i) => (maxDiff = Math.max(maxDiff, Math.abs(w - two.weights[i]))));
    expect(maxDiff).toBeLessThan(1e-5);
    expect(splitByTokens([{ ids: [1, 2, 3, 4] }, { ids: [1] }, { ids: [1, 2, 3] }]).map((p) => p.length)).toEqual([
      1, 2,
    ]);
  });

  it('honours an aborted signal between steps', async () => {
    const model = Model.create(
      { ...loadBaseModel('tuneboard/tiny-random', null).spec.config, n_layers: 1 },
      { seed: 4 },
    );
    const abort = new AbortController();
    abort.abort(new Error('stop'));
    await expect(
      trainSft(model, tok, examples, { batchSize: 2, learningRate: 1e-3, assistantTurns: 'all', signal: abort.signal }),
    ).rejects.toThrow('stop');
    model.release();
  });

  it('learns: greedy generation of each prompt gives its trained answer, which it did not before', async () => {
    const { model, tokenizer } = loadBaseModel('tuneboard/tiny-random', null);
    const answers = async () => {
      const res = await generate(
        model,
        tokenizer,
        pairs.map(([q]) => ({
          promptTokenIds: tokenizer.encode(tpl.render([{ role: 'user', content: q }], { addGenerationPrompt: true })),
          maxTokens: 10,
          eosTokenId: tokenizer.specialTokenId('<|im_end|>'),
          sampling: { temperature: 0 },
          generator: new Generator(0),
        })),
      );
      return res.map((r) => r.text);
    };
    const expected = pairs.map(([, a]) => a);
    const before = await answers();
    expect(before.filter((a, i) => a === expected[i])).toEqual([]);
    const r = await trainSft(model, tokenizer, Array.from({ length: 50 }, () => examples).flat(), {
      batchSize: 8,
      learningRate: 3e-3,
      assistantTurns: 'all',
    });
    expect(r.steps).toHaveLength(50);
    expect(r.steps.at(-1)!.loss).toBeLessThan(0.1);
    expect(await answers()).toEqual(expected);
    model.release();
  });
});
