import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import type { ChatCompletion, ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { config } from '@/lib/config';
import { getDb } from '@/lib/db/client';
import { insertCheckpoint } from '@/lib/db/repositories/models';
import { putArtifact } from '@/lib/storage';
import { createModel, createUser, type TestUser } from '../support/helpers';
import { routeFetch } from '../support/route-fetch';
import { useBaseModels } from '../support/base-models';
import { tinyQwen3Adapter, writeTinyQwen3, type TinyQwen3 } from '../support/tiny-hf-model';

/**
 * A Hugging Face base model with `"engine": "llama.cpp"` in the base-models file, served through
 * /v1/chat/completions: llama.cpp's forward pass from a GGUF file the server writes once into its cache, our
 * sampler on top. Against the WebAssembly engine on the same weights (a tiny random Qwen3 with the real Qwen3
 * tokenizer, written from TypeScript): the same greedy tokens, logprobs within tests/inference/llama-cpp.test.ts's
 * tolerance, seeded sampling repeatable, `n` over the slots a 400, a corrupt cache file rebuilt, Q8_0 within the
 * stated tolerance of F16, and checkpoints of such a base on llama.cpp through LoRA adapter files (or, for an
 * adapter llama.cpp cannot apply, on the WebAssembly engine).
 */

const WASM = 'tiny/qwen3-wasm';
const LLAMA = 'tiny/qwen3-llama';
/** The same directory and dtype (so the same GGUF file) under another key: a fresh load in the threads. */
const LLAMA_AGAIN = 'tiny/qwen3-llama-again';
const Q8 = 'tiny/qwen3-llama-q8';
const SLOTS = 2;

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-llama-chat-'));
let tiny: TinyQwen3;
let user: TestUser;
/** Models whose step 1 is the same PEFT adapter, one on the llama.cpp base, one on the WebAssembly base. */
let onLlama = '';
let onWasm = '';
/** The same with an adapter of the output head too. */
let onLlamaHead = '';
let onWasmHead = '';
const saved = { ...process.env };

const sdk = () =>
  new OpenAI({ apiKey: user.key, baseURL: 'http://localhost:3000/v1', fetch: routeFetch, maxRetries: 0 });
const messages = [{ role: 'user' as const, content: 'Say something.' }];

function greedy(model: string, extra: Partial<ChatCompletionCreateParamsNonStreaming> = {}): Promise<ChatCompletion> {
  return sdk().chat.completions.create({
    model,
    messages,
    max_tokens: 8,
    temperature: 0,
    logprobs: true,
    top_logprobs: 5,
    // @ts-expect-error vLLM's extension: every answer has max_tokens tokens to compare.
    ignore_eos: true,
    ...extra,
  });
}

const tokens = (r: ChatCompletion) => r.choices[0].logprobs!.content!.map((t) => t.token);
const logprobs = (r: ChatCompletion) => r.choices[0].logprobs!.content!.map((t) => t.logprob);

function cacheFiles(suffix: string): string[] {
  const dir = path.join(config.artifactDir, 'cache', 'llama-cpp');
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith(suffix))
    .map((f) => path.join(dir, f));
}

/**
 * Puts new bytes at `file` as a new inode: the threads that have the file open keep the old one mapped, as they
 * would if an operator's copy replaced it (changing the mapped pages in place would change those models too).
 */
function replace(file: string, bytes: Uint8Array): void {
  fs.writeFileSync(`${file}.test`, bytes);
  fs.renameSync(`${file}.test`, file);
}

async function modelWithAdapter(base: string, adapter: { config: Uint8Array; weights: Uint8Array }): Promise<string> {
  const model = await createModel(user, { base_model: base, project: 'llama' });
  const prefix = `models/${model.id}/checkpoints/1`;
  await putArtifact(`${prefix}/adapter_config.json`, adapter.config);
  await putArtifact(`${prefix}/adapter_model.safetensors`, adapter.weights);
  await insertCheckpoint(await getDb(), {
    modelId: model.id,
    step: 1,
    metrics: {},
    artifactKey: `${prefix}/adapter_model.safetensors`,
  });
  return `${user.handle}/llama/${model.name}`;
}

beforeAll(async () => {
  tiny = writeTinyQwen3(path.join(tmp, 'qwen3'), 5);
  const llama = { backend: 'hf', path: tiny.dir, engine: 'llama.cpp' };
  useBaseModels([
    { id: WASM, backend: 'hf', path: tiny.dir },
    { id: LLAMA, ...llama, slots: SLOTS },
    { id: LLAMA_AGAIN, ...llama, slots: SLOTS + 1 },
    { id: Q8, ...llama, dtype: 'q8_0', slots: SLOTS },
  ]);
  user = await createUser();
  const adapter = tinyQwen3Adapter(tiny, { seed: 11 });
  onLlama = await modelWithAdapter(LLAMA, adapter);
  onWasm = await modelWithAdapter(WASM, adapter);
  const withHead = tinyQwen3Adapter(tiny, { seed: 12, head: true });
  onLlamaHead = await modelWithAdapter(LLAMA, withHead);
  onWasmHead = await modelWithAdapter(WASM, withHead);
}, 120_000);

afterAll(() => {
  process.env = saved;
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('a Hugging Face base model on llama.cpp ("engine": "llama.cpp")', () => {
  it('answers greedily with the WebAssembly engine’s tokens, logprobs within tolerance, from one cached GGUF file', async () => {
    const wasm = await greedy(WASM);
    const llama = await greedy(LLAMA);
    expect(tokens(llama)).toHaveLength(8);
    expect(tokens(llama)).toEqual(tokens(wasm));
    expect(llama.choices[0].message.content).toBe(wasm.choices[0].message.content);
    // tests/inference/llama-cpp.test.ts: llama.cpp's F16 matmuls round activations to f16 (we compute in f32);
    // chosen-token logprobs within 0.1 nat on this random model.
    const a = logprobs(llama);
    const b = logprobs(wasm);
    for (let i = 0; i < a.length; i++) expect(Math.abs(a[i] - b[i])).toBeLessThan(0.1);
    // And they are llama.cpp's own, not the WebAssembly engine's (the checkpoint test below relies on telling them apart).
    expect(a).not.toEqual(b);
    for (const t of llama.choices[0].logprobs!.content!) {
      expect(t.top_logprobs).toHaveLength(5);
      expect(t.logprob).toBeCloseTo(t.top_logprobs[0].logprob, 5);
    }
    // Written once, into the cache, with its checksum record; a second request reuses it.
    const [file] = cacheFiles('.f16.gguf');
    expect(cacheFiles('.f16.gguf')).toHaveLength(1);
    const { mtimeMs } = fs.statSync(file);
    const record = JSON.parse(fs.readFileSync(`${file}.sha256`, 'utf8')) as { sha256: string; size: number };
    expect(record.size).toBe(fs.statSync(file).size);
    expect(tokens(await greedy(LLAMA))).toEqual(tokens(wasm));
    expect(fs.statSync(file).mtimeMs).toBe(mtimeMs);
    expect(fs.readdirSync(path.dirname(file)).filter((f) => f.includes('.tmp-'))).toEqual([]);
  }, 300_000);

  it('samples with a seed: the same answer twice', async () => {
    const ask = () =>
      sdk().chat.completions.create({ model: LLAMA, messages, max_tokens: 10, n: 2, seed: 7, temperature: 1 });
    const a = await ask();
    const b = await ask();
    expect(a.choices).toHaveLength(2);
    expect(a.usage!.completion_tokens).toBeGreaterThan(0);
    expect(a.choices.map((c) => c.message.content)).toEqual(b.choices.map((c) => c.message.content));
    // Another seed draws another answer (10 tokens from a sharp but not one-hot distribution).
    const other = await sdk().chat.completions.create({
      model: LLAMA,
      messages,
      max_tokens: 10,
      n: 2,
      seed: 8,
      temperature: 1,
    });
    expect(other.choices.map((c) => c.message.content)).not.toEqual(a.choices.map((c) => c.message.content));
  }, 300_000);

  it('refuses more choices than llama.cpp has slots with a 400 naming n and the limit', async () => {
    const err = await sdk()
      .chat.completions.create({ model: LLAMA, messages, max_tokens: 4, n: SLOTS + 1, temperature: 1 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    const apiErr = err as InstanceType<typeof OpenAI.APIError>;
    expect(apiErr.status).toBe(400);
    expect(apiErr.message).toContain(`n must be at most ${SLOTS} for this model, got ${SLOTS + 1}`);
    expect((apiErr.error as { param?: string }).param).toBe('n');
  }, 60_000);

  it('rebuilds a cache file whose bytes no longer match its checksum record before llama.cpp opens it', async () => {
    const reference = await greedy(LLAMA);
    const [file] = cacheFiles('.f16.gguf');
    const record = JSON.parse(fs.readFileSync(`${file}.sha256`, 'utf8')) as { sha256: string; size: number };
    // Garbage over the tensor data, the size unchanged: llama.cpp would load it and answer from broken weights.
    const bytes = fs.readFileSync(file);
    crypto.randomFillSync(bytes, Math.floor(record.size / 2), 4096);
    replace(file, bytes);
    const sha = () => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
    expect(sha()).not.toBe(record.sha256);
    // LLAMA_AGAIN: the same file under another key, so a thread opens it afresh.
    const again = await greedy(LLAMA_AGAIN);
    expect(sha()).toBe(record.sha256);
    expect(tokens(again)).toEqual(tokens(reference));
    expect(logprobs(again)).toEqual(logprobs(reference));
    // A file whose writing never finished (no record) is rebuilt too, not used.
    fs.rmSync(`${file}.sha256`);
    replace(file, fs.readFileSync(file).subarray(0, Math.floor(record.size / 3)));
    const third = await greedy(LLAMA_AGAIN, { seed: 1 });
    expect(fs.statSync(file).size).toBe(record.size);
    expect(sha()).toBe(record.sha256);
    expect(tokens(third)).toEqual(tokens(reference));
  }, 300_000);

  it('serves q8_0 with logprobs within the stated tolerance of f16 (greedy tokens equal until F16’s top two are that close)', async () => {
    const f16 = await greedy(LLAMA);
    const q8 = await greedy(Q8);
    expect(cacheFiles('.q8_0.gguf')).toHaveLength(1);
    expect(fs.statSync(cacheFiles('.q8_0.gguf')[0]).size).toBeLessThan(fs.statSync(cacheFiles('.f16.gguf')[0]).size);
    // docs/engine/llama-cpp.md: |Δ logprob| < 2 nat for tokens with p ≥ 0.001. Compared along the shared prefix: a
    // greedy decode may part where F16's top two are closer than the quantisation moves them (on this random model
    // they part after a few tokens), and from there the two answers condition on different text.
    const a = f16.choices[0].logprobs!.content!;
    const b = q8.choices[0].logprobs!.content!;
    let compared = 0;
    let shared = 0;
    for (let i = 0; i < a.length; i++) {
      const theirs = new Map(b[i].top_logprobs.map((t) => [t.token, t.logprob]));
      for (const t of a[i].top_logprobs) {
        const other = theirs.get(t.token);
        if (other === undefined || t.logprob < Math.log(0.001)) continue;
        expect(Math.abs(t.logprob - other)).toBeLessThan(2);
        compared++;
      }
      if (a[i].token !== b[i].token) {
        // Where they part, F16 ranks Q8_0's pick within the tolerance of its own (each moves by < 2 nat).
        const q8Pick = a[i].top_logprobs.find((t) => t.token === b[i].token);
        expect(q8Pick).toBeDefined();
        expect(a[i].logprob - q8Pick!.logprob).toBeLessThan(4);
        break;
      }
      shared++;
    }
    // The first tokens agree (the prefill's argmax, as the engine test states), and the comparison saw most of them.
    expect(shared).toBeGreaterThanOrEqual(2);
    expect(compared).toBeGreaterThanOrEqual(shared);
    expect(logprobs(q8)).not.toEqual(logprobs(f16));
  }, 300_000);

  it("serves a checkpoint of a llama.cpp base on llama.cpp, its adapter a LoRA file: the WebAssembly engine's greedy tokens on the same adapter", async () => {
    const tuned = await greedy(`${onLlama}:step1`);
    const same = await greedy(`${onWasm}:step1`);
    const base = await greedy(LLAMA);
    expect(tokens(tuned)).toEqual(tokens(same));
    // The tolerance of the base's comparison (first test); llama.cpp's own numbers, not the WebAssembly engine's.
    const [a, b] = [logprobs(tuned), logprobs(same)];
    for (let i = 0; i < a.length; i++) expect(Math.abs(a[i] - b[i])).toBeLessThan(0.1);
    expect(a).not.toEqual(b);
    // The adapter is applied, and its file is in the cache beside the base's.
    expect(tokens(tuned)).not.toEqual(tokens(base));
    expect(cacheFiles('.gguf').filter((f) => f.includes('.f16.lora-'))).toHaveLength(1);
    // Step 0 is the base itself.
    expect(logprobs(await greedy(`${onLlama}:step0`))).toEqual(logprobs(base));
  }, 300_000);

  it('serves an adapter llama.cpp cannot apply as it is (the output head) on the WebAssembly engine', async () => {
    const tuned = await greedy(`${onLlamaHead}:step1`);
    const same = await greedy(`${onWasmHead}:step1`);
    // The WebAssembly engine's numbers exactly (llama.cpp's differ from them: previous test).
    expect(tokens(tuned)).toEqual(tokens(same));
    expect(logprobs(tuned)).toEqual(logprobs(same));
  }, 300_000);
});
