import { describe, expect, it } from 'vitest';
import { generate, type GenerationRequest } from '@/lib/engine/generate';
import { Model } from '@/lib/engine/model';
import { choiceGenerator } from '@/lib/engine/random';
import { Tokenizer } from '@/lib/engine/tokenizer';
import type { EngineEvent, TokenEvent } from './engine-events';
import { BatchScheduler } from './scheduler';
import { TINY_TEST_CONFIG } from '@/tests/support/inference';

const tok = new Tokenizer();
const config = TINY_TEST_CONFIG;

function request(prompt: string, seed: number, i: number, extra: Partial<GenerationRequest> = {}): GenerationRequest {
  return {
    promptTokenIds: tok.encode(prompt),
    maxTokens: 12,
    sampling: { temperature: 0.9 },
    topLogprobs: 2,
    generator: choiceGenerator(seed, i),
    ...extra,
  };
}

function run(
  scheduler: BatchScheduler,
  id: string,
  sequences: GenerationRequest[],
  promptLogprobs: number | null = null,
) {
  return new Promise<{ events: EngineEvent[]; promptLogprobs: unknown }>((resolve, reject) => {
    const events: EngineEvent[] = [];
    scheduler.submit({
      id,
      sequences,
      promptLogprobs,
      onEvents: (e) => events.push(...e),
      onDone: ({ promptLogprobs }) => resolve({ events, promptLogprobs }),
      onError: reject,
    });
  });
}

describe('BatchScheduler', () => {
  it('produces exactly what generate() produces, for concurrent requests batched together', async () => {
    const model = Model.create(config, { seed: 3 });
    const expected = await generate(model, tok, [request('hello', 7, 0), request('hello', 7, 1)]);
    const other = await generate(model, tok, [request('a different prompt', 11, 0)]);

    const scheduler = new BatchScheduler(model, tok);
    const [a, b] = await Promise.all([
      run(scheduler, 'a', [request('hello', 7, 0), request('hello', 7, 1)]),
      run(scheduler, 'b', [request('a different prompt', 11, 0)]),
    ]);
    const tokensOf = (events: EngineEvent[], choice: number) =>
      events.filter((e): e is TokenEvent => e.type === 'token' && e.choice === choice).map((e) => e.tokenId);
    expect(tokensOf(a.events, 0)).toEqual(expected[0].tokens.map((t) => t.tokenId));
    expect(tokensOf(a.events, 1)).toEqual(expected[1].tokens.map((t) => t.tokenId));
    expect(tokensOf(b.events, 0)).toEqual(other[0].tokens.map((t) => t.tokenId));
    const last = a.events.filter((e) => e.type === 'token' && e.choice === 0).at(-1) as TokenEvent;
    expect(last.finishReason).toBe(expected[0].finishReason);
    // Raw text, before any stop-string cut, concatenates to the decoded output.
    expect(
      a.events
        .filter((e): e is TokenEvent => e.type === 'token' && e.choice === 1)
        .map((e) => e.text)
        .join(''),
    ).toBe(expected[1].text);
  });

  it('aborts a running request: its choices finish with abort, others go on', async () => {
    const model = Model.create(config, { seed: 4 });
    const scheduler = new BatchScheduler(model, tok);
    const long = run(scheduler, 'long', [request('abc', 1, 0, { maxTokens: 50, ignoreEos: true })]);
    const short = run(scheduler, 'short', [request('xyz', 2, 0, { maxTokens: 5 })]);
    scheduler.abort('long');
    const [l, s] = await Promise.all([long, short]);
    expect(l.events.at(-1)).toMatchObject({ type: 'finish', finishReason: 'abort' });
    expect(s.events.filter((e) => e.type === 'token')).toHaveLength(5);
  });

  it('returns prompt logprobs with the first position null', async () => {
    const model = Model.create(config, { seed: 5 });
    const scheduler = new BatchScheduler(model, tok);
    const res = await run(scheduler, 'p', [request('hey you', 1, 0, { maxTokens: 2 })], 3);
    const positions = res.promptLogprobs as unknown[];
    expect(positions).toHaveLength(tok.encode('hey you').length);
    expect(positions[0]).toBeNull();
    expect(positions[1]).toMatchObject({ token: { tokenId: tok.encode('hey you')[1] } });
  });
});
