import 'server-only';
import { formatTinkerPath } from '@/lib/schemas/tinker';
import { TINKER_FILES } from '@/lib/schemas/workers';

/** The files of saved weights (docs/tinker.md §3.2): PEFT's adapter, and for a training state its AdamW state. */
export type WeightFile = (typeof TINKER_FILES)[number];

export type WeightsKind = 'training' | 'sampler';

/** A kind of saves as `tinker://` paths and checkpoint ids name it. */
const pathKind = (kind: WeightsKind) => (kind === 'training' ? 'weights' : 'sampler_weights');

/** docs/tinker.md §2.6: `tinker://<model_id>/weights/<name>` (training state) or `…/sampler_weights/<name>`. */
export function tinkerPath(modelId: string, kind: WeightsKind, name: string): string {
  return formatTinkerPath({ model_id: modelId, kind: pathKind(kind), name });
}

/** The checkpoint id the REST routes use for saved weights: `weights/<name>` or `sampler_weights/<name>`. */
export function checkpointIdOf(kind: WeightsKind, name: string): string {
  return `${pathKind(kind)}/${name}`;
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
