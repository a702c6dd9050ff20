import { describe, expect, it } from 'vitest';
import { generate, SequenceDecoder, type GenerationRequest, type TokenEvent } from './generate';
import { Model, type ModelConfig } from './model';
import { choiceGenerator, Generator } from './random';
import { Tokenizer, defaultTokenizerConfig } from './tokenizer';
import { compileStructuredOutput } from './constrained';

// Merges make multi-character tokens: 261 = "ab", 262 = "abc".
const tok = new Tokenizer({
  ...defaultTokenizerConfig(),
  merges: [
    [97, 98],
    [261, 99],
  ],
});
const V = tok.vocabSize;
const EOS = tok.eosId;
const ids = (s: string) => tok.encode(s);

function oneHot(id: number): Float32Array {
  const x = new Float32Array(V);
  x[id] = 10;
  return x;
}

/** Feeds a fixed token script through a SequenceDecoder with greedy sampling. */
function run(
  script: number[],
  req: Partial<GenerationRequest>,
  contextLength = 1000,
): { events: TokenEvent[]; d: SequenceDecoder } {
  const d = new SequenceDecoder(
    tok,
    {
      promptTokenIds: [1, 2, 3],
      maxTokens: 100,
      eosTokenId: EOS,
      generator: new Generator(0),
      ...req,
      sampling: { temperature: 0, ...req.sampling },
    },
    contextLength,
  );
  const events: TokenEvent[] = [];
  for (const id of script) {
    if (d.finished) break;
    events.push(d.step(oneHot(id), 0));
  }
  return { events, d };
}

describe('SequenceDecoder stop handling (docs/contract.md §8.5)', () => {
  it('EOS stops with stop_reason null and is counted but not detokenised', () => {
    const { d } = run([...ids('hi'), EOS, 120], {});
    expect([d.finishReason, d.stopReason, d.result(null).text]).toEqual(['stop', null, 'hi']);
    expect(d.tokens.map((t) => t.tokenId)).toEqual([104, 105, EOS]);
  });

  it('ignore_eos keeps going to max_tokens; special tokens are skipped in text', () => {
    const { d } = run([104, EOS, 105, 106], { ignoreEos: true, maxTokens: 3 });
    expect([d.finishReason, d.stopReason, d.result(null).text]).toEqual(['length', null, 'hi']);
    const { d: d2 } = run([104, EOS, 105], { ignoreEos: true, maxTokens: 3, skipSpecialTokens: false });
    expect(d2.result(null).text).toBe('h<|eos|>i');
  });

  it('stop_token_ids report the numeric id, even with ignore_eos; included only on request', () => {
    const { d } = run([104, 33, 105], { ignoreEos: true, sampling: { stopTokenIds: [33] } });
    expect([d.finishReason, d.stopReason, d.result(null).text, d.tokens.length]).toEqual(['stop', 33, 'h', 2]);
    const { d: d2 } = run([104, 33], { sampling: { stopTokenIds: [33] }, includeStopStrInOutput: true });
    expect(d2.result(null).text).toBe('h!');
  });

  it('stop strings cut at the match start (or after it when included) and drop the rest', () => {
    const { d } = run([120, 262, 120], { stop: ['zz', 'b'] });
    expect([d.finishReason, d.stopReason, d.result(null).text, d.tokens.length]).toEqual(['stop', 'b', 'xa', 2]);
    const { d: d2 } = run([120, 262], { stop: ['b'], includeStopStrInOutput: true });
    expect(d2.result(null).text).toBe('xab');
    // Several matches in one token's text: the one that ends first wins (vLLM's rule since it made
    // multi-token steps agree with single steps), ties by list order.
    const { d: d3 } = run([262], { stop: ['c', 'a'] });
    expect([d3.stopReason, d3.result(null).text]).toEqual(['a', '']);
    const { d: d5 } = run([262], { stop: ['bc', 'abc', 'c'] });
    expect([d5.stopReason, d5.result(null).text]).toEqual(['bc', 'a']);
    // A match spanning two tokens is found.
    const { d: d4 } = run([120, 261, 120], { stop: ['bx'] });
    expect([d4.stopReason, d4.result(null).text, d4.tokens.length]).toEqual(['bx', 'xa', 3]);
  });

  it('text from the first min_tokens tokens is not searched for stop strings', () => {
    const { d } = run([97, 97, 97, 98], { stop: ['a'], sampling: { minTokens: 2 } });
    expect([d.finishReason, d.result(null).text, d.tokens.length]).toEqual(['stop', 'aa', 3]);
  });

  it('min_tokens masks EOS and stop ids so they cannot end the sequence early', () => {
    // The script asks for EOS first, but min_tokens bans it; greedy then takes the next best (id 0).
    const { d } = run([EOS, EOS, EOS], { sampling: { minTokens: 2 } });
    expect(d.tokens.map((t) => t.tokenId)).toEqual([0, 0, EOS]);
    expect(d.finishReason).toBe('stop');
  });

  it('holds back a possible stop-string prefix while streaming, then flushes at the end', () => {
    const { events } = run([97, 98, 99, 100], { stop: ['xyz'], maxTokens: 4 });
    expect(events.map((e) => e.textDelta)).toEqual(['', '', 'a', 'bcd']);
    const { events: e2 } = run([97, 98], { stop: ['xyz'], includeStopStrInOutput: true, maxTokens: 2 });
    expect(e2.map((e) => e.textDelta)).toEqual(['a', 'b']);
  });

  it('EOS and stop ids win over length on the last allowed token (vLLM ≥ 0.12); the context ends with length', () => {
    const { d } = run([104, EOS], { maxTokens: 2 });
    expect([d.finishReason, d.stopReason, d.result(null).text]).toEqual(['stop', null, 'h']);
    const { d: d1, events } = run([120], { maxTokens: 1, sampling: { stopTokenIds: [120] } });
    expect([d1.finishReason, d1.stopReason, d1.result(null).text, events[0].rawText]).toEqual(['stop', 120, '', '']);
    const { d: d3 } = run([104, EOS], {}, 5); // prompt 3 + 2 generated = context 5, the last one EOS
    expect([d3.finishReason, d3.stopReason]).toEqual(['stop', null]);
    const { d: d2 } = run([104, 105, 106, 107], {}, 5);
    expect([d2.finishReason, d2.tokens.length]).toEqual(['length', 2]);
  });

  it('never streams a broken UTF-8 character', () => {
    const { events } = run([0xc3, 0xa9, 0xf0, 0x9f], { maxTokens: 4 });
    expect(events.map((e) => e.textDelta)).toEqual(['', 'é', '', '']);
  });

  it('a constraint overrides what the logits prefer, then forces EOS once complete', () => {
    const constraint = compileStructuredOutput({ constraint: { kind: 'choice', choices: ['abc', 'xy'] } }, tok, [EOS]);
    // The logits always push 'x' (120); the merge token 'abc' (262) is one allowed first token.
    const { d } = run([120, 120, 120, 120, 120], { constraint });
    expect([d.result(null).text, d.finishReason]).toEqual(['xy', 'stop']);
    expect(d.tokens.map((t) => t.tokenId)).toEqual([120, 121, EOS]);
    const { d: d2 } = run([262, 120, 120], { constraint });
    expect([d2.result(null).text, d2.tokens.map((t) => t.tokenId)]).toEqual(['abc', [262, EOS]]);
  });
});

describe('generate', () => {
  const config: ModelConfig = {
    vocab: V,
    d_model: 32,
    n_layers: 2,
    n_heads: 4,
    n_kv_heads: 2,
    d_ff: 64,
    ctx: 48,
    rope_theta: 10000,
    norm_eps: 1e-5,
    tie_embeddings: true,
  };
  const model = Model.create(config, { seed: 11 });
  const prompt = tok.encode('<|im_start|>user\nhello<|im_end|>');

  it('follows sampling constraints end to end', async () => {
    const [r] = await generate(model, tok, [
      {
        promptTokenIds: prompt,
        maxTokens: 5,
        generator: new Generator(1),
        sampling: { temperature: 0, logitBias: { 104: 100 } },
        topLogprobs: 2,
      },
    ]);
    expect(r.text).toBe('hhhhh');
    expect(r.finishReason).toBe('length');
    expect(r.tokens).toHaveLength(5);
    expect(r.tokens[0].topLogprobs).toHaveLength(2);
    expect(r.tokens[0].topLogprobs[0].tokenId).toBe(104); // sampled first when not rank 1 in raw logprobs
  });

  it('is deterministic per seed, independent of batching, with seed + i per choice', async () => {
    const req = (i: number): GenerationRequest => ({
      promptTokenIds: prompt,
      maxTokens: 12,
      generator: choiceGenerator(42, i),
      sampling: { temperature: 1.5 },
    });
    const batched = await generate(model, tok, [req(0), req(1), req(2)]);
    const alone = await generate(model, tok, [req(1)]);
    expect(alone[0].tokens.map((t) => t.tokenId)).toEqual(batched[1].tokens.map((t) => t.tokenId));
    expect(batched[0].tokens.map((t) => t.tokenId)).not.toEqual(batched[1].tokens.map((t) => t.tokenId));
    const again = await generate(model, tok, [req(0)]);
    expect(again[0].text).toBe(batched[0].text);
  });

  it('stops every sequence on abort, keeping what was generated', async () => {
    const controller = new AbortController();
    const events: TokenEvent[] = [];
    const results = await generate(
      model,
      tok,
      [0, 1].map((i) => ({ promptTokenIds: prompt, maxTokens: 20, generator: new Generator(i) })),
      {
        signal: controller.signal,
        onToken: (e) => {
          events.push(e);
          if (events.length === 4) controller.abort();
        },
      },
    );
    expect(results.map((r) => [r.finishReason, r.tokens.length])).toEqual([
      ['abort', 2],
      ['abort', 2],
    ]);
  });

  it('returns prompt logprobs with a null first entry', async () => {
    const [r] = await generate(model, tok, [
      { promptTokenIds: prompt, maxTokens: 1, generator: new Generator(0), promptLogprobs: 3 },
    ]);
    expect(r.promptLogprobs).toHaveLength(prompt.length);
    expect(r.promptLogprobs?.[0]).toBeNull();
    const second = r.promptLogprobs?.[1];
    expect(second?.tokenId).toBe(prompt[1]);
    expect(second?.top).toHaveLength(3);
    expect(second?.rank).toBeGreaterThanOrEqual(1);
    expect(second?.logprob).toBeLessThan(0);
  });

  it('leaves no allocation behind, even when aborted', async () => {
    const before = model.heap.liveAllocations;
    const controller = new AbortController();
    await generate(model, tok, [
      { promptTokenIds: prompt, maxTokens: 6, generator: new Generator(0), promptLogprobs: 1 },
    ]);
    await generate(
      model,
      tok,
      [0, 1, 2].map((i) => ({ promptTokenIds: prompt, maxTokens: 9, generator: new Generator(i) })),
      {
        signal: controller.signal,
        onToken: () => controller.abort(),
      },
    );
    expect(model.heap.liveAllocations).toBe(before);
  });

  it('rejects prompts that fill the context', async () => {
    await expect(
      generate(model, tok, [{ promptTokenIds: new Array(48).fill(1), maxTokens: 1, generator: new Generator(0) }]),
    ).rejects.toThrow(/does not fit/);
  });
});
