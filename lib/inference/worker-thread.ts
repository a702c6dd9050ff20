/**
 * An inference worker thread: holds models in an LRU cache (TUNEBOARD_MODEL_CACHE_MB per thread) and runs
 * one continuous-batching scheduler per model. Started by pool.ts; talks only through its message port.
 */
import v8 from 'node:v8';
import { parentPort } from 'node:worker_threads';
import type { Llama } from 'node-llama-cpp';
import { adapterFromBundle, hfFilesFromBundle, unpackFiles } from '@/lib/engine/hf/bundle';
import { parseHfConfig } from '@/lib/engine/hf/config';
import { HfTokenizer } from '@/lib/engine/hf/tokenizer';
import { loadHfModel, type LoadedHfModel } from '@/lib/engine/hf/load';
import { LoraAdapter } from '@/lib/engine/hf/lora';
import { Model, parameterCount, type LanguageModel } from '@/lib/engine/model';
import { decodeModel } from '@/lib/engine/safetensors';
import { Tokenizer, type TokenPieces } from '@/lib/engine/tokenizer';
import { cachedStructuredGrammar, StructuredOutputCompileError } from '@/lib/engine/constrained';
import { LlamaCppModel } from './llama-cpp';
import { BatchScheduler } from './scheduler';
import { toGenerationRequest, type FromWorker, type LlamaCppBundleInfo, type ModelSpec, type ToWorker } from './wire';
import { config } from '@/lib/config';
import { componentLogger } from '@/lib/logger';
import { lowerThisThreadPriority } from '@/lib/config/thread-priority';

const log = componentLogger('inference-worker');

// The FMA kernels need relaxed SIMD, behind a flag on Node 20. Heaps (and the kernel module) are created
// lazily on first use, so setting it here, before any model exists, is early enough.
v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

if (!parentPort) throw new Error('worker-thread.ts must run as a worker thread');
const port = parentPort;
lowerThisThreadPriority();
const post = (message: FromWorker) => port.postMessage(message);

const budgetBytes = config.modelCacheBytes;

interface Loaded {
  model: { release(): void };
  tokenizer: TokenPieces;
  /** The Hugging Face base this entry runs on (its weights are shared, and counted once, in `hfBases`). */
  hfBase?: string;
  scheduler: BatchScheduler;
  bytes: number;
  lastUsed: number;
}
const loaded = new Map<string, Loaded>();
const loading = new Map<string, Promise<Loaded>>();
const weightWaiters = new Map<string, { resolve: (b: ArrayBuffer) => void; reject: (e: Error) => void }>();
const requestModel = new Map<string, string>();
// Hugging Face base models, one copy per thread whatever the number of checkpoints (adapters) on it.
const hfBases = new Map<string, { loaded: LoadedHfModel; bytes: number }>();
const hfBaseLoading = new Map<string, Promise<{ loaded: LoadedHfModel; bytes: number }>>();

function fetchWeights(key: string): Promise<ArrayBuffer> {
  return new Promise<ArrayBuffer>((resolve, reject) => {
    weightWaiters.set(key, { resolve, reject });
    post({ type: 'need-weights', key });
  });
}

async function hfBase(key: string): Promise<{ loaded: LoadedHfModel; bytes: number }> {
  const have = hfBases.get(key);
  if (have) return have;
  let pending = hfBaseLoading.get(key);
  if (!pending) {
    pending = (async () => {
      const files = hfFilesFromBundle(new Uint8Array(await fetchWeights(key)));
      const loaded = loadHfModel(files);
      const entry = { loaded, bytes: loaded.model.weightBytes };
      hfBases.set(key, entry);
      return entry;
    })();
    hfBaseLoading.set(key, pending);
    pending.finally(() => hfBaseLoading.delete(key)).catch(() => undefined);
  }
  return pending;
}

let llamaRuntime: Promise<Llama> | undefined;

/** node-llama-cpp's prebuilt CPU binding, loaded on first use (a thread that serves no llama.cpp model never loads it). */
function llamaCpp(): Promise<Llama> {
  llamaRuntime ??= import('node-llama-cpp').then(({ getLlama, LlamaLogLevel }) =>
    getLlama({ gpu: false, build: 'never', skipDownload: true, maxThreads: 1, logLevel: LlamaLogLevel.error }),
  );
  return llamaRuntime;
}

/**
 * A Hugging Face base on llama.cpp: the bundle brings the small files (the tokenizer, the config's vocabulary
 * size) and the GGUF file's path, written and checked by the server (lib/services/llama-cpp-gguf.ts).
 */
async function loadLlamaCpp(key: string): Promise<Loaded> {
  const files = unpackFiles(new Uint8Array(await fetchWeights(key)));
  const text = (name: string) => {
    const bytes = files.get(name);
    return bytes && new TextDecoder().decode(bytes);
  };
  const info = JSON.parse(text('llama-cpp.json') ?? 'null') as LlamaCppBundleInfo | null;
  if (!info) throw new Error('a llama.cpp model bundle lacks llama-cpp.json');
  const hf = parseHfConfig(JSON.parse(text('config.json') ?? 'null'));
  const tokenizerConfig = JSON.parse(text('tokenizer_config.json') ?? '{}') as Record<string, unknown>;
  const tokenizer = new HfTokenizer(JSON.parse(text('tokenizer.json') ?? 'null'), tokenizerConfig, hf.vocab);
  const model = await LlamaCppModel.open(await llamaCpp(), info.gguf, {
    slots: info.slots,
    ctx: info.ctx,
    vocab: hf.vocab,
    lora: info.lora ?? undefined,
  });
  return {
    model: { release: () => void model.release() },
    tokenizer,
    scheduler: new BatchScheduler(model, tokenizer),
    // The weights are the GGUF file, mapped by llama.cpp (the KV cells come on top).
    bytes: info.bytes,
    lastUsed: Date.now(),
  };
}

/** A checkpoint as a model: the shared base, with this adapter on every sequence it starts. */
function adapted(base: LoadedHfModel, adapter: LoraAdapter | null): LanguageModel & { release(): void } {
  return {
    config: base.model.config,
    forward: (inputs, options) => base.model.forward(inputs, options),
    newCache: (capacity) => base.model.newCache(capacity, adapter),
    release: () => adapter?.release(),
  };
}

function evict(except: string) {
  let total = [...loaded.values()].reduce((a, l) => a + l.bytes, 0);
  const idle = [...loaded.entries()]
    .filter(([key, l]) => key !== except && l.scheduler.activeSequences === 0)
    .sort((a, b) => a[1].lastUsed - b[1].lastUsed);
  for (const [key, l] of idle) {
    if (total <= budgetBytes) break;
    l.model.release();
    loaded.delete(key);
    total -= l.bytes;
  }
  // A Hugging Face base goes once no cached entry runs on it.
  for (const [key, b] of hfBases) {
    if (total + [...hfBases.values()].reduce((a, x) => a + x.bytes, 0) <= budgetBytes) break;
    if ([...loaded.values()].some((l) => l.hfBase === key)) continue;
    b.loaded.model.release();
    hfBases.delete(key);
  }
}

async function load(spec: ModelSpec): Promise<Loaded> {
  const have = loaded.get(spec.key);
  if (have) return have;
  const pending = loading.get(spec.key);
  if (pending) return pending;
  const promise = (async () => {
    let entry: Loaded;
    if (spec.source.kind === 'hf' && spec.source.engine === 'llama.cpp') {
      entry = await loadLlamaCpp(spec.key);
    } else if (spec.source.kind === 'hf') {
      const source = spec.source;
      const base = await hfBase(source.baseKey);
      let adapter: LoraAdapter | null = null;
      if (source.adapter) {
        const files = adapterFromBundle(new Uint8Array(await fetchWeights(spec.key)));
        adapter = LoraAdapter.load(base.loaded.model, files.config, files.weights);
      }
      const model = adapted(base.loaded, adapter);
      entry = {
        model,
        tokenizer: base.loaded.tokenizer,
        hfBase: source.baseKey,
        scheduler: new BatchScheduler(model, base.loaded.tokenizer),
        bytes: adapter?.bytes ?? 0,
        lastUsed: Date.now(),
      };
    } else {
      let model: Model;
      if (spec.source.kind === 'random') {
        model = Model.create(spec.source.config, { seed: spec.source.seed });
      } else {
        model = decodeModel(new Uint8Array(await fetchWeights(spec.key)));
      }
      if (spec.tokenizer.kind !== 'byte') throw new Error('a built-in model needs a byte-level tokenizer');
      const tokenizer = new Tokenizer(spec.tokenizer.config);
      entry = {
        model,
        tokenizer,
        scheduler: new BatchScheduler(model, tokenizer),
        // Weights plus their packed copy for the kernels.
        bytes: parameterCount(model.config) * 4 * 2,
        lastUsed: Date.now(),
      };
    }
    loaded.set(spec.key, entry);
    evict(spec.key);
    return entry;
  })();
  loading.set(spec.key, promise);
  try {
    return await promise;
  } finally {
    loading.delete(spec.key);
  }
}

port.on('message', (message: ToWorker) => {
  if (message.type === 'weights') {
    const waiter = weightWaiters.get(message.key);
    weightWaiters.delete(message.key);
    if (message.bytes) waiter?.resolve(message.bytes);
    else waiter?.reject(new Error(message.error ?? 'weights unavailable'));
    return;
  }
  if (message.type === 'abort') {
    const key = requestModel.get(message.id);
    if (key) loaded.get(key)?.scheduler.abort(message.id);
    return;
  }
  const { id } = message;
  // Structured-output grammars compile here, not on the request thread (a 15,000-entry enum takes about 2 s): first
  // the grammar, before any weights are loaded for a request that is refused, then the vocabulary's constraint. The
  // server waits for `accepted` or `refused` before it answers, so a constraint the engine cannot enforce is still a
  // 400 before the first byte.
  try {
    for (const seq of message.sequences) if (seq.structuredOutput) cachedStructuredGrammar(seq.structuredOutput);
  } catch (err) {
    if (err instanceof StructuredOutputCompileError) return post({ type: 'refused', id, message: err.message });
    log.error({ err }, 'structured output compile failed');
    return post({ type: 'error', id, message: err instanceof Error ? err.message : String(err) });
  }
  requestModel.set(id, message.model.key);
  load(message.model)
    .then((entry) => {
      entry.lastUsed = Date.now();
      let sequences;
      try {
        sequences = message.sequences.map((seq) => toGenerationRequest(seq, entry.tokenizer));
      } catch (err) {
        if (!(err instanceof StructuredOutputCompileError)) throw err;
        requestModel.delete(id);
        return post({ type: 'refused', id, message: err.message });
      }
      post({ type: 'accepted', id });
      entry.scheduler.submit({
        id,
        sequences,
        promptLogprobs: message.promptLogprobs,
        onEvents: (events) => post({ type: 'events', id, events }),
        onDone: ({ promptLogprobs }) => {
          requestModel.delete(id);
          post({ type: 'done', id, promptLogprobs });
        },
        onError: (err) => {
          requestModel.delete(id);
          log.error({ err }, 'generation failed');
          post({ type: 'error', id, message: err instanceof Error ? err.message : String(err) });
        },
      });
    })
    .catch((err: unknown) => {
      requestModel.delete(id);
      log.error({ err }, 'model load failed');
      post({ type: 'error', id, message: err instanceof Error ? err.message : String(err) });
    });
});

post({ type: 'ready' });
