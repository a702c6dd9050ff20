import fs from 'node:fs';
import { z } from 'zod';
import { config } from '@/lib/config';

const baseModelsFileSchema = z.object({
  models: z.array(
    z.object({ id: z.string().min(1), backend: z.enum(['builtin', 'upstream']), description: z.string().optional() }),
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

function backendAvailable(backend: BaseModel['backend']): boolean {
  return backend === 'builtin' || Boolean(process.env.TUNEBOARD_UPSTREAM_URL);
}

/** Base models that can be used right now: their backend is configured on this server. */
export function availableBaseModels(): BaseModel[] {
  return loadAll().filter((m) => backendAvailable(m.backend));
}

export function findAvailableBaseModel(id: string): BaseModel | undefined {
  return availableBaseModels().find((m) => m.id === id);
}
