import fs from 'node:fs';
import { z } from 'zod';
import { config } from '@/lib/config';
import { builtinModelSource } from './builtin-models';

const baseModelsFileSchema = z.object({
  models: z.array(
    z.object({
      id: z.string().min(1),
      backend: z.enum(['builtin', 'upstream']),
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
  return model.backend === 'builtin' ? builtinModelSource(model.id) !== undefined : Boolean(process.env.TUNEBOARD_UPSTREAM_URL);
}

/** Base models that can be used right now: their backend is configured on this server. */
export function availableBaseModels(): BaseModel[] {
  return loadAll().filter(available);
}

export function findAvailableBaseModel(id: string): BaseModel | undefined {
  return availableBaseModels().find((m) => m.id === id);
}
