import fs from 'node:fs';
import { z } from 'zod';
import { config } from '@/lib/config';
import { builtinModelSource } from './builtin-models';

const baseModelsFileSchema = z.object({
  models: z.array(
    z.object({
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
      description: z.string().optional(),
      /** The model's name at the upstream server, when it differs from `id`. */
      upstream_model: z.string().min(1).optional(),
    }),
  ),
});
export type BaseModel = z.infer<typeof baseModelsFileSchema>['models'][number];

let cache: { file: string; mtimeMs: number; models: BaseModel[] } | undefined;

function loadAll(): BaseModel[] {
  const file = config.baseModelsFile;
  const { mtimeMs } = fs.statSync(file);
  if (cache?.file !== file || cache.mtimeMs !== mtimeMs) {
    cache = { file, mtimeMs, models: baseModelsFileSchema.parse(JSON.parse(fs.readFileSync(file, 'utf8'))).models };
  }
  return cache.models;
}

function available(model: BaseModel): boolean {
  // A built-in model is usable once the engine knows it and its weights exist (seeded or built by the
  // pretraining script); an upstream one once an upstream server is configured.
  if (model.backend === 'builtin') return builtinModelSource(model.id) !== undefined;
  if (model.backend === 'upstream') return Boolean(process.env.TUNEBOARD_UPSTREAM_URL);
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
  kinds: ('rl' | 'sft')[];
  /** Pinned to these models (a team's own machine, a test); all models when absent. */
  model_ids?: string[];
}

/** Whether a worker with these capabilities may train a job of `kind` on `model` (base model `baseModel`). */
export function canTrain(caps: WorkerCapabilities, job: { kind: 'rl' | 'sft'; modelId: string; baseModel: string }): boolean {
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
