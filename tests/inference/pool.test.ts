import { afterAll, describe, expect, it, vi } from 'vitest';
import { generate } from '@/lib/engine/generate';
import { Model } from '@/lib/engine/model';
import { choiceGenerator } from '@/lib/engine/random';
import { encodeModel } from '@/lib/engine/safetensors';
import { Tokenizer } from '@/lib/engine/tokenizer';
import type { EngineEvent, TokenEvent } from '@/lib/inference/engine-events';
import { InferencePool } from '@/lib/inference/pool';
import { TINY_TEST_CONFIG } from '@/tests/support/inference';

const tok = new Tokenizer();
const byteTokenizer = { kind: 'byte' as const, config: tok.config };
const config = TINY_TEST_CONFIG;
const pool = new InferencePool(2);
type OnMessage = (entry: unknown, message: { type: string; events?: EngineEvent[] }) => void;
const originalOnMessage = (InferencePool.prototype as unknown as { onMessage: OnMessage }).onMessage;
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
      {
        promptTokenIds: tok.encode('pool'),
        maxTokens: 10,
        sampling: { temperature: 0 },
        generator: choiceGenerator(1, 0),
      },
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
    // A model and a budget big enough that generating every token takes seconds: the abort has to land.
    const long = { ...config, d_model: 64, d_ff: 256, ctx: 2048 };
    const maxTokens = 2000;
    // What the worker actually sends back, including events after the consumer stopped reading.
    const delivered: EngineEvent[] = [];
    const onMessage = vi.spyOn(InferencePool.prototype as unknown as { onMessage: OnMessage }, 'onMessage');
    onMessage.mockImplementation(function (this: unknown, entry, message) {
      if (message.type === 'events') delivered.push(...(message.events ?? []));
      originalOnMessage.call(this, entry, message);
    });
    try {
      const handle = pool.generate({
        model: { key: 'random:long', source: { kind: 'random', config: long, seed: 10 }, tokenizer: byteTokenizer },
        sequences: [
          { promptTokenIds: tok.encode('x'), maxTokens, ignoreEos: true, sampling: {}, seed: null, choice: 0 },
        ],
        promptLogprobs: null,
      });
      const iterator = handle.events[Symbol.asyncIterator]();
      await iterator.next();
      await iterator.return!();
      await expect(handle.finished).resolves.toBeDefined();
    } finally {
      onMessage.mockRestore();
    }
    const finish = delivered.find((e) => e.type === 'finish' || (e.type === 'token' && e.finishReason));
    expect(finish).toMatchObject({ type: 'finish', finishReason: 'abort' });
    expect(delivered.filter((e) => e.type === 'token').length).toBeLessThan(maxTokens);
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
