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
