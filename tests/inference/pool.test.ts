import { afterAll, describe, expect, it } from 'vitest';
import { generate } from '@/lib/engine/generate';
import { Model } from '@/lib/engine/model';
import { choiceGenerator } from '@/lib/engine/random';
import { encodeModel } from '@/lib/engine/safetensors';
import { Tokenizer } from '@/lib/engine/tokenizer';
import type { EngineEvent, TokenEvent } from '@/lib/inference/engine-events';
import { InferencePool } from '@/lib/inference/pool';
import { TINY_TEST_CONFIG } from '@/lib/inference/test-helpers';

const tok = new Tokenizer();
const byteTokenizer = { kind: 'byte' as const, config: tok.config };
const config = TINY_TEST_CONFIG;
const pool = new InferencePool(2);
afterAll(() => pool.close());

async function collect(events: AsyncIterable<EngineEvent>) {
  const out: EngineEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

describe('InferencePool (worker threads)', () => {
  it('generates in a worker exactly what the engine generates in-process, from random or stored weights', async () => {
    const model = Model.create(config, { seed: 9 });
    const expected = await generate(model, tok, [
      { promptTokenIds: tok.encode('pool'), maxTokens: 10, sampling: { temperature: 0 }, generator: choiceGenerator(1, 0) },
    ]);
    const sequence = {
      promptTokenIds: tok.encode('pool'),
      maxTokens: 10,
      sampling: { temperature: 0 },
      seed: '1',
      choice: 0,
      topLogprobs: 0,
    };
    const random = pool.generate({
      model: { key: 'random:9', source: { kind: 'random', config, seed: 9 }, tokenizer: byteTokenizer },
      sequences: [sequence],
      promptLogprobs: null,
    });
    const fromRandom = (await collect(random.events)).filter((e): e is TokenEvent => e.type === 'token');
    expect(fromRandom.map((e) => e.tokenId)).toEqual(expected[0].tokens.map((t) => t.tokenId));

    let loads = 0;
    const bytes = encodeModel(model);
    const stored = () =>
      pool.generate({
        model: { key: 'weights:test', source: { kind: 'weights' }, tokenizer: byteTokenizer },
        loadWeights: async () => (loads++, bytes),
        sequences: [sequence],
        promptLogprobs: null,
      });
    const fromWeights = (await collect(stored().events)).filter((e): e is TokenEvent => e.type === 'token');
    expect(fromWeights.map((e) => e.tokenId)).toEqual(expected[0].tokens.map((t) => t.tokenId));
    await collect(stored().events);
    expect(loads).toBeLessThanOrEqual(2); // once per worker thread at most: weights are cached
  });

  it('aborts when the consumer stops reading', async () => {
    const handle = pool.generate({
      model: { key: 'random:10', source: { kind: 'random', config, seed: 10 }, tokenizer: byteTokenizer },
      sequences: [{ promptTokenIds: tok.encode('x'), maxTokens: 60, ignoreEos: true, sampling: {}, seed: null, choice: 0 }],
      promptLogprobs: null,
    });
    const iterator = handle.events[Symbol.asyncIterator]();
    await iterator.next();
    await iterator.return!();
    await expect(handle.finished).resolves.toBeDefined();
  });

  it('reports a weights failure as an error', async () => {
    const handle = pool.generate({
      model: { key: 'weights:missing', source: { kind: 'weights' }, tokenizer: byteTokenizer },
      loadWeights: async () => {
        throw new Error('artifact missing');
      },
      sequences: [{ promptTokenIds: tok.encode('x'), maxTokens: 2, sampling: {}, seed: null, choice: 0 }],
      promptLogprobs: null,
    });
    await expect(collect(handle.events)).rejects.toThrow(/artifact missing/);
  });
});
