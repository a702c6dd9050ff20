/**
 * Playground model names: a base model id (`tuneboard/tiny-random`), a trained model by its inference
 * name (`entity/project/name`, its latest checkpoint), or one checkpoint (`entity/project/name:step12`).
 * The picker shows a trained model and its checkpoint as two choices; these helpers split and join them.
 */

export interface ModelChoice {
  /** The base model id or the trained model's `entity/project/name`. */
  model: string;
  /** A checkpoint step, or null for a base model / the latest checkpoint. */
  step: number | null;
}

export function splitModelName(name: string): ModelChoice {
  const match = /^(.*):step(\d+)$/.exec(name);
  if (match && match[1] !== '') return { model: match[1], step: Number(match[2]) };
  // `:latest` means the same as no suffix.
  return { model: name.replace(/:latest$/, ''), step: null };
}

export function joinModelName({ model, step }: ModelChoice): string {
  return step === null ? model : `${model}:step${step}`;
}

export const MAX_COMPARE = 4;

/** The playground's `?prompt=` and `?system=` are cut at this many characters: a URL is no place for a document. */
export const MAX_PREFILL_CHARS = 8000;

/** `?model=` values (repeatable, for comparisons): trimmed, de-duplicated, at most four. */
export function modelsFromSearchParam(values: readonly string[]): string[] {
  const out: string[] = [];
  for (const raw of values) {
    const value = raw.trim();
    if (value && value.length <= 512 && !out.includes(value)) out.push(value);
    if (out.length === MAX_COMPARE) break;
  }
  return out;
}

/**
 * What "Compare" adds beside a pane that holds a checkpoint: the same model at another step. Step 0 (the
 * base weights the run started from) first, then the checkpoint before this one, then the other steps
 * nearest first. `steps` are the model's checkpoint steps; `latestStep` is what a name without a step
 * means. Null when every step is already in a pane (or the pane holds no trained model).
 */
export function otherStepOfModel(
  current: string,
  inPanes: readonly string[],
  steps: readonly number[],
  latestStep: number | null,
): string | null {
  const { model, step } = splitModelName(current);
  const at = step ?? latestStep;
  if (at === null) return null;
  const shown = new Set<number>();
  for (const name of inPanes) {
    const choice = splitModelName(name);
    const s = choice.step ?? latestStep;
    if (choice.model === model && s !== null) shown.add(s);
  }
  const below = steps.filter((s) => s < at).sort((a, b) => b - a);
  const above = steps.filter((s) => s > at).sort((a, b) => a - b);
  const order = [...(steps.includes(0) ? [0] : []), ...below, ...above];
  const next = order.find((s) => s !== at && !shown.has(s));
  return next === undefined ? null : joinModelName({ model, step: next });
}

/** A model name cut for display: the part that tells models apart first, where it lives second. */
export interface ModelLabel {
  /** The model's own name: the last path segment (`first-model`, `tiny-random`). */
  name: string;
  /** What comes before it (`entity/project`, or a base model's organisation); empty when there is none. */
  scope: string;
}

export function modelLabel(model: string): ModelLabel {
  const slash = model.lastIndexOf('/');
  if (slash <= 0 || slash === model.length - 1) return { name: model, scope: '' };
  return { name: model.slice(slash + 1), scope: model.slice(0, slash) };
}

/** Up to three figures that say how good a checkpoint is: held-out ones first, then reward, then loss. */
export function headlineMetrics(metrics: Record<string, number>): [string, number][] {
  const rank = (k: string) =>
    k === 'val/reward' ? 0 : k.startsWith('val/') ? 1 : k === 'train/reward' ? 2 : k === 'train/loss' ? 3 : 9;
  return Object.entries(metrics)
    .filter(([k, v]) => typeof v === 'number' && Number.isFinite(v) && rank(k) < 9)
    .sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b))
    .slice(0, 3);
}
