import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Points TUNEBOARD_BASE_MODELS_FILE at a copy of the real base-models file with `extra` entries added (the real
 * file lists no Hugging Face model). A file that sets it runs in the 'isolated' Vitest project (vitest.config.mts).
 */
export function useBaseModels(extra: Record<string, unknown>[]): void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-base-models-'));
  const file = path.join(dir, 'base-models.json');
  const real = JSON.parse(fs.readFileSync(path.join('config', 'base-models.json'), 'utf8'));
  real.models.push(...extra);
  fs.writeFileSync(file, JSON.stringify(real));
  process.env.TUNEBOARD_BASE_MODELS_FILE = file;
}
