import 'server-only';

/** The files of saved weights (docs/tinker.md §3.2): PEFT's adapter, and for a training state its AdamW state. */
export const WEIGHT_FILES = ['adapter_config.json', 'adapter_model.safetensors', 'optimizer.safetensors'] as const;
export type WeightFile = (typeof WEIGHT_FILES)[number];

export type WeightsKind = 'training' | 'sampler';

/** docs/tinker.md §2.6: `tinker://<model_id>/weights/<name>` (training state) or `…/sampler_weights/<name>`. */
export function tinkerPath(modelId: string, kind: WeightsKind, name: string): string {
  return `tinker://${modelId}/${kind === 'training' ? 'weights' : 'sampler_weights'}/${name}`;
}

/** The checkpoint id the REST routes use for saved weights: `weights/<name>` or `sampler_weights/<name>`. */
export function checkpointIdOf(kind: WeightsKind, name: string): string {
  return `${kind === 'training' ? 'weights' : 'sampler_weights'}/${name}`;
}

/** Total bytes of a save from the sizes its worker reported for each file. */
export function sizeFromFiles(files: unknown): number {
  if (!Array.isArray(files)) return 0;
  let total = 0;
  for (const f of files) {
    const size = (f as { size?: unknown })?.size;
    if (typeof size === 'number' && Number.isFinite(size) && size >= 0) total += size;
  }
  return total;
}
