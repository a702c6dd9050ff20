import { describe, expect, it } from 'vitest';
import type { GenerationRequest } from '@/lib/engine/generate';
import { Model } from '@/lib/engine/model';
import { Generator } from '@/lib/engine/random';
import { defaultTokenizerConfig, Tokenizer, trainBpeMerges } from '@/lib/engine/tokenizer';
import type { ChatCompletionChunk, ChatCompletionResponse } from '@/lib/schemas/chat';
import { ChatCompletionBuilder } from './chat-response';
import type { EngineEvent } from './engine-events';
import { BatchScheduler } from './scheduler';
import { ChatStreamEncoder, SSE_DONE } from './sse';
import { parseChatRequest, resolveSamplingRequest, type SamplingRequest } from './chat-request';
import { wireSequences } from './backends/builtin';
import { toGenerationRequest } from './wire';

/**
 * Differential test of the chat-completions path against vLLM's rules (docs/vllm-compat.md). Seeded random
 * requests over the sampling parameter space run through the real pipeline — request validation, the
 * continuous-batching scheduler over a real (tiny, random) model, and the stream and whole-response
 * builders — and every answer is checked three ways:
 *
 * 1. streamed = not streamed: the concatenated deltas, token ids, finish_reason, stop_reason and logprobs
 *    of each choice equal the non-stream response's;
 * 2. n = 1 vs n > 1: with a seed, choice i of an n-choice request equals the n = 1 request seeded seed + i
 *    (vLLM seeds its child requests that way, so it guarantees this);
 * 3. a reference: the token ids the engine produced are replayed through a small, independent port of
 *    vLLM's rules — check_stop (EOS, stop ids, then length, none before min_tokens), DecodeStream's
 *    detokenisation (nothing released while the text ends in U+FFFD) and check_stop_strings (new text only,
 *    the match that ends first wins) — which must stop on exactly the last token and give the same text,
 *    finish_reason and stop_reason. With top_logprobs = 0 each logprob entry's token must also be vLLM's
 *    decoded_token (LogprobsProcessor._verify_tokens).
 *
 * Stop strings and stop ids are drawn from what the same seed generates without them, so that they hit,
 * and often span several tokens. The vocabulary has BPE merges (tokens of several characters) and the
 * allowed_token_ids sets mix ASCII with pieces of multi-byte characters.
 */

const tok = new Tokenizer(
  trainBpeMerges(
    ['the nut tt utter tenet nu ab abab tut te et', 'a nut, the tent; ab-ab tt'],
    24,
    defaultTokenizerConfig(),
  ),
);
const EOS = tok.specialTokenId('<|im_end|>') as number;
const CTX_LEN = 96;
const model = Model.create(
  {
    vocab: tok.vocabSize,
    d_model: 32,
    n_layers: 1,
    n_heads: 2,
    n_kv_heads: 2,
    d_ff: 64,
    ctx: CTX_LEN,
    rope_theta: 10000,
    norm_eps: 1e-5,
    tie_embeddings: true,
  },
  { seed: 21 },
);
const scheduler = new BatchScheduler(model, tok);
const PROMPT = tok.encode('<|im_start|>user\nSay something<|im_end|>\n<|im_start|>assistant\n');
const created = 1767225600;

// ---------------------------------------------------------------------------------------------------------
// The pipeline as lib/services/chat.ts runs it (validation → wire sequences → worker → response builders).

function validate(body: Record<string, unknown>): SamplingRequest | null {
  try {
    return resolveSamplingRequest(
      parseChatRequest({
        model: 'wandb-artifact:///acme/agents/agent-001',
        messages: [{ role: 'user', content: 'hi' }],
        ...body,
      }),
      {
        vocabSize: tok.vocabSize,
        maxModelLen: CTX_LEN,
        promptTokenCount: PROMPT.length,
        maxLogprobs: 20,
        generationConfig: null,
        eosTokenId: EOS,
        headerRequestId: 'diff',
      },
    );
  } catch {
    return null; // a 400: not part of this test
  }
}

let nextId = 0;
function generateEvents(s: SamplingRequest): Promise<EngineEvent[]> {
  const sequences: GenerationRequest[] = wireSequences(s, PROMPT, tok, EOS).map((w) => toGenerationRequest(w, tok));
  return new Promise((resolve, reject) => {
    const events: EngineEvent[] = [];
    scheduler.submit({
      id: `r${nextId++}`,
      sequences,
      promptLogprobs: null,
      onEvents: (e) => events.push(...e),
      onDone: () => resolve(events),
      onError: reject,
    });
  });
}

interface ChoiceResult {
  text: string;
  tokenIds: number[];
  finishReason: string | null;
  stopReason: string | number | null;
  /** Each logprob entry's `bytes` as text: the decoded token, also when `token` is `token_id:N`. */
  logprobTokens: string[];
  logprobs: unknown[];
}

async function nonStreamed(body: Record<string, unknown>): Promise<ChoiceResult[] | null> {
  const s = validate({ ...body, stream: false });
  if (!s) return null;
  const builder = new ChatCompletionBuilder(s, { created, promptTokenIds: PROMPT });
  for (const e of await generateEvents(s)) builder.push(e);
  const r: ChatCompletionResponse = builder.build();
  return r.choices.map((c) => ({
    text: c.message.content ?? '',
    tokenIds: c.token_ids ?? [],
    finishReason: c.finish_reason,
    stopReason: c.stop_reason ?? null,
    logprobTokens: (c.logprobs?.content ?? []).map((e) => Buffer.from(e.bytes ?? []).toString('utf8')),
    logprobs: c.logprobs?.content ?? [],
  }));
}

async function streamed(
  body: Record<string, unknown>,
): Promise<{ choices: ChoiceResult[]; chunks: ChatCompletionChunk[] }> {
  const s = validate({ ...body, stream: true });
  if (!s) throw new Error('valid without streaming but refused when streamed');
  const enc = new ChatStreamEncoder(s, { created, promptTokenIds: PROMPT });
  const frames = [...enc.start()];
  for (const e of await generateEvents(s)) frames.push(...enc.push(e));
  frames.push(...enc.end());
  const chunks = frames
    .filter((f) => f !== SSE_DONE)
    .map((f) => JSON.parse(f.slice('data: '.length)) as ChatCompletionChunk);
  const choices: ChoiceResult[] = Array.from({ length: s.n }, () => ({
    text: '',
    tokenIds: [],
    finishReason: null,
    stopReason: null,
    logprobTokens: [],
    logprobs: [],
  }));
  for (const chunk of chunks) {
    for (const c of chunk.choices) {
      const out = choices[c.index];
      out.text += c.delta.content ?? '';
      out.tokenIds.push(...(c.token_ids ?? []));
      out.logprobs.push(...(c.logprobs?.content ?? []));
      out.logprobTokens.push(...(c.logprobs?.content ?? []).map((e) => Buffer.from(e.bytes ?? []).toString('utf8')));
      if (c.finish_reason) {
        out.finishReason = c.finish_reason;
        out.stopReason = c.stop_reason ?? null;
      }
    }
  }
  return { choices, chunks };
}

// ---------------------------------------------------------------------------------------------------------
// The reference: vLLM's stop rules and detokenisation, written from vLLM's Python, independent of the engine.

const utf8Lossy = new TextDecoder('utf-8', { ignoreBOM: true });
const codePoints = (s: string) => Array.from(s);

/** tokenizers' DecodeStream over a byte-level vocabulary: text is released only when it does not end in U+FFFD. */
class RefDecodeStream {
  private bytes: number[] = [];
  constructor(private readonly skipSpecial: boolean) {}
  step(id: number): string {
    if (this.skipSpecial && tok.isSpecial(id)) return '';
    this.bytes.push(...tok.tokenBytes(id));
    const text = utf8Lossy.decode(Uint8Array.from(this.bytes));
    if (text.endsWith('\uFFFD')) return '';
    this.bytes = [];
    return text;
  }
}

/** vLLM's check_stop_strings, on code points like Python's str. Returns [stop, truncate_to | −1]. */
function refCheckStopStrings(
  text: string,
  newCharCount: number,
  stops: string[],
  include: boolean,
): [string, number] | null {
  if (!newCharCount || stops.length === 0) return null;
  const out = codePoints(text);
  let best: string | null = null;
  let bestIndex = 0;
  let bestEnd = Infinity;
  for (const stop of stops) {
    const s = codePoints(stop);
    // output_text.find(stop_str, 1 - new_char_count - len(stop_str)): a negative start counts from the end.
    const start = Math.max(0, out.length + 1 - newCharCount - s.length);
    let index = -1;
    for (let i = start; i + s.length <= out.length; i++) {
      if (s.every((c, j) => out[i + j] === c)) {
        index = i;
        break;
      }
    }
    if (index === -1) continue;
    const end = index + s.length;
    if (end < bestEnd) {
      best = stop;
      bestIndex = index;
      bestEnd = end;
    }
  }
  if (best === null) return null;
  if (include) return [best, bestEnd >= out.length ? -1 : bestEnd];
  return [best, bestIndex];
}

interface RefOutcome {
  text: string;
  finishReason: 'stop' | 'length' | null;
  stopReason: string | number | null;
  /** Index of the token that finished the request, or −1. */
  finishedAt: number;
}

/** Replays generated token ids through check_stop + the detokenizer + check_stop_strings. */
function refReplay(ids: number[], s: SamplingRequest): RefOutcome {
  const detok = new RefDecodeStream(s.skip_special_tokens);
  let text = '';
  let finishReason: RefOutcome['finishReason'] = null;
  let stopReason: string | number | null = null;
  for (let i = 0; i < ids.length; i++) {
    const n = i + 1;
    const id = ids[i];
    let stopTerminated = false;
    // check_stop (vLLM ≥ 0.12): nothing before min_tokens; EOS, stop ids, then length.
    if (n >= s.min_tokens) {
      if (!s.ignore_eos && id === EOS) stopTerminated = true;
      else if (s.stop_token_ids.includes(id)) {
        stopTerminated = true;
        stopReason = id;
      }
    }
    if (stopTerminated) finishReason = 'stop';
    else if (n >= s.max_tokens || PROMPT.length + n >= CTX_LEN) finishReason = 'length';
    // The detokenizer: a stop-terminating token is not decoded unless include_stop_str_in_output.
    let checkOffset = codePoints(text).length;
    if (!(stopTerminated && !s.include_stop_str_in_output)) text += detok.step(id);
    if (s.min_tokens && n <= s.min_tokens) checkOffset = codePoints(text).length;
    if (s.stop.length && n > s.min_tokens) {
      const m = refCheckStopStrings(text, codePoints(text).length - checkOffset, s.stop, s.include_stop_str_in_output);
      if (m) {
        if (m[1] !== -1) text = codePoints(text).slice(0, m[1]).join('');
        finishReason = 'stop';
        stopReason = m[0];
      }
    }
    if (finishReason) return { text, finishReason, stopReason, finishedAt: i };
  }
  return { text, finishReason: null, stopReason: null, finishedAt: -1 };
}

/** LogprobsProcessor._verify_tokens for a one-entry list (top_logprobs = 0): the sampled token's text. */
function refDecodedToken(id: number, previous: number | null): string {
  const alone = tok.decode([id]);
  if (!alone.endsWith('\uFFFD')) return alone;
  if (previous !== null) {
    const joined = tok.decode([previous, id]);
    if (!joined.endsWith('\uFFFD')) return joined;
  }
  return '';
}

// ---------------------------------------------------------------------------------------------------------
// Random requests.

const ALLOWED_POOL = [
  ...tok.encode('nut tt ab e'),
  ...tok.encode('the tent'),
  0xc3, // é = C3 A9
  0xa9,
  0xe4, // 中 = E4 B8 AD
  0xb8,
  0xad,
  154, // a stray continuation byte
  EOS,
];

function pick<T>(g: Generator, list: readonly T[]): T {
  return list[Math.floor(g.random() * list.length)];
}

function subsetOf(g: Generator, list: readonly number[], min: number, max: number): number[] {
  const size = min + Math.floor(g.random() * (max - min + 1));
  const out = new Set<number>();
  while (out.size < size) out.add(pick(g, list));
  return [...out];
}

/** Substrings of a text, most of them spanning several characters. */
function substringsOf(g: Generator, text: string, count: number): string[] {
  const cps = codePoints(text).filter((c) => c !== '\uFFFD');
  const out: string[] = [];
  for (let k = 0; k < count && cps.length; k++) {
    const len = 1 + Math.floor(g.random() * Math.min(4, cps.length));
    const at = Math.floor(g.random() * (cps.length - len + 1));
    out.push(cps.slice(at, at + len).join(''));
  }
  return out;
}

function randomBase(g: Generator): Record<string, unknown> {
  const body: Record<string, unknown> = {
    max_tokens: 1 + Math.floor(g.random() * 20),
    logprobs: true,
    top_logprobs: pick(g, [0, 0, 1, 3]),
    return_token_ids: true,
    return_tokens_as_token_ids: g.random() < 0.5,
    seed: Math.floor(g.random() * 1000),
  };
  const temperature = pick(g, [0, 0.6, 1, 1.5]);
  body.temperature = temperature;
  if (temperature > 0) {
    body.n = pick(g, [1, 1, 2, 3]);
    if (g.random() < 0.3) body.top_p = pick(g, [0.5, 0.9]);
    if (g.random() < 0.3) body.top_k = pick(g, [3, 10]);
    if (g.random() < 0.2) body.min_p = 0.05;
  }
  if (g.random() < 0.2) body.repetition_penalty = 1.3;
  if (g.random() < 0.2) body.frequency_penalty = 0.5;
  if (g.random() < 0.2) body.presence_penalty = 0.5;
  if (g.random() < 0.5) body.allowed_token_ids = subsetOf(g, ALLOWED_POOL, 2, 6);
  if (g.random() < 0.2) body.ignore_eos = true;
  if (g.random() < 0.2) body.skip_special_tokens = false;
  if (g.random() < 0.1) body.bad_words = [pick(g, ['t', ' nu', '\u001fab'])];
  if (g.random() < 0.1 && !body.allowed_token_ids) body.structured_outputs = { regex: '(nu|tt|ab|e)+' };
  return body;
}

/** Adds stop strings / stop ids / min_tokens drawn from what the request generates without them. */
function withStops(g: Generator, body: Record<string, unknown>, probe: ChoiceResult): Record<string, unknown> {
  const out = { ...body };
  if (g.random() < 0.7 && probe.text) {
    out.stop = [...substringsOf(g, probe.text, 1 + Math.floor(g.random() * 3)), ...(g.random() < 0.3 ? ['zzz'] : [])];
    if (g.random() < 0.3) out.include_stop_str_in_output = true;
  }
  if (g.random() < 0.4 && probe.tokenIds.length) {
    out.stop_token_ids = [pick(g, probe.tokenIds)];
    if (g.random() < 0.3) out.include_stop_str_in_output = true;
  }
  if (g.random() < 0.25) out.min_tokens = Math.floor(g.random() * Math.min(4, (out.max_tokens as number) + 1));
  return out;
}

// ---------------------------------------------------------------------------------------------------------

const REQUESTS = 70;

describe('chat completions against vLLM rules: seeded differential test', () => {
  it(`${REQUESTS} random requests: streamed = non-streamed, n=1 = each choice of n>1, the reference stop rules`, async () => {
    const g = new Generator(20261124);
    const counts = { checked: 0, refused: 0, stopString: 0, stopId: 0, length: 0, eos: 0, choicesSplit: 0 };
    for (let r = 0; r < REQUESTS; r++) {
      const base = randomBase(g);
      const probe = await nonStreamed(base);
      if (!probe) {
        counts.refused++;
        continue;
      }
      const body = withStops(g, base, probe[0]);
      const whole = await nonStreamed(body);
      if (!whole) {
        counts.refused++;
        continue;
      }
      const s = validate({ ...body, stream: false }) as SamplingRequest;
      const label = `request ${r}: ${JSON.stringify(body)}`;
      const stream = await streamed(body);
      counts.checked++;

      // Every stream delta carries content (no tool parser is configured), "" when nothing is new.
      for (const chunk of stream.chunks) {
        for (const c of chunk.choices) expect(typeof c.delta.content, label).toBe('string');
      }

      whole.forEach((choice, i) => {
        const sc = stream.choices[i];
        // 1. streamed = not streamed.
        expect(sc.text, `${label} choice ${i} text`).toBe(choice.text);
        expect(sc.tokenIds, `${label} choice ${i} token ids`).toEqual(choice.tokenIds);
        expect([sc.finishReason, sc.stopReason], `${label} choice ${i} finish`).toEqual([
          choice.finishReason,
          choice.stopReason,
        ]);
        expect(sc.logprobs, `${label} choice ${i} logprobs`).toEqual(choice.logprobs);

        // 3. the reference replay of the same token ids.
        const ref = refReplay(choice.tokenIds, s);
        expect(ref.finishedAt, `${label} choice ${i}: the reference stops on the last token`).toBe(
          choice.tokenIds.length - 1,
        );
        expect(choice.text, `${label} choice ${i} reference text`).toBe(ref.text);
        expect([choice.finishReason, choice.stopReason], `${label} choice ${i} reference finish`).toEqual([
          ref.finishReason,
          ref.stopReason,
        ]);
        // Released text never ends in U+FFFD; only a stop-string cut can leave one at the end.
        if (typeof choice.stopReason !== 'string') {
          expect(choice.text.endsWith('\uFFFD'), `${label} choice ${i}: no trailing U+FFFD`).toBe(false);
        }
        if (s.top_logprobs === 0) {
          const expected = choice.tokenIds.map((id, k) => refDecodedToken(id, k > 0 ? choice.tokenIds[k - 1] : null));
          expect(choice.logprobTokens, `${label} choice ${i} logprob tokens`).toEqual(expected);
        }
        if (typeof choice.stopReason === 'string') counts.stopString++;
        else if (typeof choice.stopReason === 'number') counts.stopId++;
        else if (choice.finishReason === 'length') counts.length++;
        else counts.eos++;
      });

      // 2. n = 1 vs n > 1 with a seed: child i is seeded seed + i.
      if (s.n > 1 && s.seed !== null) {
        for (let i = 0; i < s.n; i++) {
          const single = await nonStreamed({ ...body, n: 1, seed: Number(s.seed) + i });
          expect(single, label).not.toBeNull();
          // Same tokens, text and finish; logprobs equal up to float rounding (a batch of n sequences rounds
          // differently from a batch of one, in vLLM too).
          const { logprobs: a, ...rest } = single![0];
          const { logprobs: b, ...expected } = whole[i];
          expect(rest, `${label}: n=1 seed+${i} = choice ${i}`).toEqual(expected);
          const values = (l: unknown[]) =>
            JSON.stringify(l)
              .match(/-?\d+\.\d+(e-?\d+)?/g)
              ?.map(Number) ?? [];
          values(a).forEach((v, k) => expect(v).toBeCloseTo(values(b)[k], 5));
        }
        counts.choicesSplit++;
      }
    }
    // The draw must exercise every way of stopping, or the test proves little.
    expect(counts.checked).toBeGreaterThan(REQUESTS * 0.8);
    expect(counts.stopString).toBeGreaterThan(10);
    expect(counts.stopId).toBeGreaterThan(3);
    expect(counts.length).toBeGreaterThan(10);
    expect(counts.eos).toBeGreaterThan(0);
    expect(counts.choicesSplit).toBeGreaterThan(3);
  }, 120_000);
});
