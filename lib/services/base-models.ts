import 'server-only';
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
  if (model.backend === 'upstream') return config.upstream !== undefined;
  return false; // hf: neither training (workers/python) nor serving is wired yet

}

/** Base models that can be used right now: their backend is configured on this server. */
export function availableBaseModels(): BaseModel[] {
  return loadAll().filter(available);
}

export function findAvailableBaseModel(id: string): BaseModel | undefined {
  return availableBaseModels().find((m) => m.id === id);
}
