import 'server-only';
import fs from 'node:fs';
import { z } from 'zod';
import { config } from '@/lib/config';
import { REASONING_PARSERS } from '@/lib/inference/reasoning';
import { builtinModelSource } from './builtin-models';

/**
 * The base-model catalog: the base-models file (TUNEBOARD_BASE_MODELS_FILE), read and checked, and the rules it
 * decides: who trains each base model and which workers may, who serves it, which ids are usable here. Below both
 * the services and the job queue (lib/jobs/server), which match workers against it, so neither imports the other
 * for it. Serving status, Hub downloads and the API's descriptions stay in lib/services/base-models.ts.
 */

/** The forward passes the built-in engine serves a Hugging Face base model with (the base-models file's `engine`). */
export const BASE_MODEL_ENGINES = ['wasm', 'llama.cpp'] as const;
/** The GGUF matrix types a base model on llama.cpp is served in (`dtype`). */
export const LLAMA_CPP_DTYPES = ['f16', 'q8_0'] as const;
export type LlamaCppDtype = (typeof LLAMA_CPP_DTYPES)[number];
/** llama.cpp context slots per inference thread when the file does not say. */
export const DEFAULT_LLAMA_CPP_SLOTS = 4;

const baseModelsFileSchema = z.object({
  models: z.array(
    z
      .object({
        id: z.string().min(1),
        /**
         * Who trains it: `builtin` the built-in CPU engine (tiny byte-level models), `hf` a Python worker
         * (PyTorch + Transformers + PEFT, workers/python) on a Hugging Face model, `upstream` nobody (served only).
         */
        backend: z.enum(['builtin', 'hf', 'upstream']),
        /**
         * `hf` only: a local directory in Hugging Face layout (config.json, *.safetensors, tokenizer.json,
         * tokenizer_config.json). Relative paths resolve against TUNEBOARD_BASE_MODELS_DIR, else the working
         * directory. Unset: a worker resolves `id` in its own Hugging Face cache.
         */
        path: z.string().min(1).optional(),
        /** `hf` only: who serves it and its checkpoints (LoRA adapters). Default `builtin` (the CPU engine). */
        serve: z.enum(['builtin', 'vllm']).optional(),
        /**
         * `hf` served by the built-in engine only: which forward pass serves the base model. `wasm` (the default) our
         * WebAssembly engine; `llama.cpp` llama.cpp (node-llama-cpp's CPU binding) on a GGUF file converted once into
         * the artifact folder's cache, with our sampler, stop rules and logprobs on its logits
         * (docs/engine/llama-cpp.md). Its checkpoints (PEFT adapters) stay on the WebAssembly engine.
         */
        engine: z
          .enum(BASE_MODEL_ENGINES, {
            error: (issue) =>
              `unknown engine ${JSON.stringify(issue.input)}; the built-in engine serves with ${BASE_MODEL_ENGINES.map((e) => `"${e}"`).join(' or ')}`,
          })
          .optional(),
        /** `engine: "llama.cpp"` only: the GGUF file's matrix type. Default `f16`; `q8_0` is half the size. */
        dtype: z
          .enum(LLAMA_CPP_DTYPES, {
            error: (issue) =>
              `unknown dtype ${JSON.stringify(issue.input)}; llama.cpp serves ${LLAMA_CPP_DTYPES.map((d) => `"${d}"`).join(' or ')}`,
          })
          .optional(),
        /**
         * `engine: "llama.cpp"` only: concurrent sequences per inference thread (llama.cpp context slots, each of the
         * served context length; default 4). A request with more choices (`n`) than this is refused with a 400.
         */
        slots: z.number().int().min(1).max(64).optional(),
        description: z.string().optional(),
        /** The model's name at the upstream server, when it differs from `id`. */
        upstream_model: z.string().min(1).optional(),
        /**
         * vLLM's `--reasoning-parser` for the built-in engine (`qwen3`, `deepseek_r1`): `<think>…</think>` in an
         * answer goes to `reasoning`, the rest to `content`. Its checkpoints inherit it. Unset: none (README,
         * "Reasoning models", says why that is the default). A model vLLM serves uses vLLM's own flag instead.
         */
        reasoning_parser: z
          .enum(REASONING_PARSERS, {
            error: (issue) =>
              `unknown reasoning_parser ${JSON.stringify(issue.input)}; the built-in engine has vLLM's ${REASONING_PARSERS.map((p) => `"${p}"`).join(' and ')}`,
          })
          .optional(),
      })
      .superRefine((m, ctx) => {
        // engine, dtype and slots choose how the built-in engine runs a Hugging Face model: anywhere else they would
        // be ignored, so they are refused instead.
        const builtinHf = m.backend === 'hf' && (m.serve ?? 'builtin') === 'builtin';
        if (m.engine !== undefined && !builtinHf) {
          ctx.addIssue({
            code: 'custom',
            path: ['engine'],
            message: 'engine applies to Hugging Face models (backend "hf") that the built-in engine serves',
          });
        }
        for (const field of ['dtype', 'slots'] as const) {
          if (m[field] !== undefined && m.engine !== 'llama.cpp') {
            ctx.addIssue({ code: 'custom', path: [field], message: `${field} applies to "engine": "llama.cpp" only` });
          }
        }
        // Only the built-in engine applies it: vLLM parses with its own --reasoning-parser, and the byte-level
        // built-in models have no <think> token. Refused here rather than silently ignored.
        if (m.reasoning_parser !== undefined && !(m.backend === 'hf' && (m.serve ?? 'builtin') === 'builtin')) {
          ctx.addIssue({
            code: 'custom',
            path: ['reasoning_parser'],
            message:
              m.backend === 'builtin'
                ? 'reasoning_parser applies to Hugging Face models (backend "hf"); the byte-level built-in models have no <think> token'
                : 'reasoning_parser applies to models the built-in engine serves; a vLLM server splits reasoning with its own --reasoning-parser flag',
          });
        }
      }),
  ),
});
export type BaseModel = z.infer<typeof baseModelsFileSchema>['models'][number];

let cache: { file: string; mtimeMs: number; checkedAt: number; models: BaseModel[] } | undefined;

/**
 * How long the file's list is used before its modification time is looked at again. Every chat completion and
 * job claim looks a base model up; a stat each time cost a relayed completion about 35 µs of the request thread
 * (bench:gateway's profile), for a file that changes when an operator edits it. An edit shows within a second.
 */
const RECHECK_MS = 1000;

function loadAll(): BaseModel[] {
  const file = config.baseModelsFile;
  const now = performance.now();
  if (cache?.file === file && now - cache.checkedAt < RECHECK_MS) return cache.models;
  const { mtimeMs } = fs.statSync(file);
  if (cache?.file !== file || cache.mtimeMs !== mtimeMs) {
    cache = {
      file,
      mtimeMs,
      checkedAt: now,
      models: parseBaseModelsFile(file, fs.readFileSync(file, 'utf8')),
    };
  }
  cache.checkedAt = now;
  return cache.models;
}

/**
 * The file's models, or an error that names the file and each bad field (`models.2.reasoning_parser: unknown
 * reasoning_parser "qwen"; …`): an operator's typo, read at the first request after an edit.
 */
export function parseBaseModelsFile(file: string, text: string): BaseModel[] {
  const parsed = baseModelsFileSchema.safeParse(JSON.parse(text));
  if (parsed.success) return parsed.data.models;
  const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
  throw new Error(`The base-models file ${file} is invalid: ${problems}`);
}

function available(model: BaseModel): boolean {
  // A built-in model is usable once the engine knows it and its weights exist (seeded or built by the
  // pretraining script); an upstream one once an upstream server is configured.
  if (model.backend === 'builtin') return builtinModelSource(model.id) !== undefined;
  if (model.backend === 'upstream') return config.upstream !== undefined;
  // hf: trainable as soon as it is listed. Its weights live where the Python workers run (their own path or
  // Hugging Face cache), so this server cannot check them; a job waits, saying so, until a capable worker
  // connects, and a worker that cannot find the directory fails the job with what to do.
  return true;
}

/** Every entry of the base-models file, available or not (the job queue matches workers against them). */
export function allBaseModels(): BaseModel[] {
  return loadAll();
}

export type TrainingBackend = 'builtin' | 'hf';

/** What a worker says it can train when it claims (stored in the worker registry). */
export interface WorkerCapabilities {
  backends: TrainingBackend[];
  /** Only these base model ids; every model of its backends when absent. */
  base_models?: string[];
  /** `tinker`: it also takes Tinker training clients (docs/tinker.md §3). */
  kinds: ('rl' | 'sft' | 'tinker')[];
  /** Pinned to these models (a team's own machine, a test); all models when absent. */
  model_ids?: string[];
}

/** Whether a worker with these capabilities may train a job of `kind` on `model` (base model `baseModel`). */
export function canTrain(
  caps: WorkerCapabilities,
  job: { kind: 'rl' | 'sft'; modelId: string; baseModel: string },
): boolean {
  const entry = loadAll().find((m) => m.id === job.baseModel);
  if (!entry || entry.backend === 'upstream' || !caps.backends.includes(entry.backend)) return false;
  if (caps.base_models && !caps.base_models.includes(job.baseModel)) return false;
  if (caps.model_ids && !caps.model_ids.includes(job.modelId)) return false;
  return caps.kinds.includes(job.kind);
}

/** The base model ids a worker with these capabilities can train (the claim's filter). */
export function trainableBaseModelIds(caps: Pick<WorkerCapabilities, 'backends' | 'base_models'>): string[] {
  return loadAll()
    .filter((m) => m.backend !== 'upstream' && caps.backends.includes(m.backend))
    .filter((m) => !caps.base_models || caps.base_models.includes(m.id))
    .map((m) => m.id);
}

/** Base models that can be used right now: their backend is configured on this server. */
export function availableBaseModels(): BaseModel[] {
  return loadAll().filter(available);
}

export function findAvailableBaseModel(id: string): BaseModel | undefined {
  return availableBaseModels().find((m) => m.id === id);
}

/** Any base model of the file, usable right now or not (chat answers 503 with the reason for the latter). */
export function findBaseModel(id: string): BaseModel | undefined {
  return loadAll().find((m) => m.id === id);
}

// ---- Routing: one rule, read from the file --------------------------------------------------------------

/** Who trains a base model: the built-in runner, the Python worker (capability `hf`), or nobody. */
export type TrainedBy = 'builtin' | 'python-worker' | null;
/** Who serves a base model and its checkpoints. */
export type ServedBy = 'builtin' | 'vllm';

export function trainedBy(model: BaseModel): TrainedBy {
  if (model.backend === 'builtin') return 'builtin';
  if (model.backend === 'hf') return 'python-worker';
  return null;
}

export function servedBy(model: BaseModel): ServedBy {
  if (model.backend === 'upstream') return 'vllm';
  if (model.backend === 'hf') return model.serve ?? 'builtin';
  return 'builtin';
}

/** The name vLLM serves a base model under (`--served-model-name`), when vLLM serves it. */
export function vllmModelName(model: BaseModel): string {
  return model.upstream_model ?? model.id;
}
