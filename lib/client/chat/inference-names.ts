/**
 * Every form a client may name a trained model by in /v1/chat/completions (docs/contract.md §7): the plain
 * `entity/project/name` (latest step), a pinned `…:stepN`, the W&B artifact URIs ART's clients send
 * (`wandb-artifact:///entity/project/name`, latest, from the Dec-2025 client; `…:stepN` from later ones),
 * and the model id (latest).
 */
export interface InferenceName {
  label: string;
  value: string;
}

type NamedModel = { entity: string; project: string; name: string };

export function modelBaseName(m: NamedModel): string {
  return `${m.entity}/${m.project}/${m.name}`;
}

export function stepName(m: NamedModel, step: number): string {
  return `${modelBaseName(m)}:step${step}`;
}

const artifact = (name: string) => `wandb-artifact:///${name}`;

export function inferenceNames(m: NamedModel & { id: string }, step: number | null): InferenceName[] {
  const base = modelBaseName(m);
  const names: InferenceName[] = [{ label: 'Latest', value: base }];
  if (step !== null) {
    names.push({ label: `Step ${step}`, value: stepName(m, step) });
    names.push({ label: 'Artifact', value: artifact(stepName(m, step)) });
    names.push({ label: 'Latest artifact', value: artifact(base) });
  }
  names.push({ label: 'Model id', value: m.id });
  return names;
}

/**
 * The names that reach one checkpoint: its pinned forms, and while it is the latest step also the forms
 * that mean "latest" (they move on to the next step when one is trained, so an older row leaves them out).
 */
export function checkpointNames(
  m: NamedModel & { id: string; latest_step: number | null },
  step: number,
): InferenceName[] {
  const pinned: InferenceName[] = [
    { label: `Step ${step}`, value: stepName(m, step) },
    { label: `Step ${step} artifact`, value: artifact(stepName(m, step)) },
  ];
  if (m.latest_step !== step) return pinned;
  const base = modelBaseName(m);
  return [
    ...pinned,
    { label: 'Latest', value: base },
    { label: 'Latest artifact', value: artifact(base) },
    { label: 'Model id (latest)', value: m.id },
  ];
}

/** The playground preselects a model by name; pinned to a step so the chat matches that checkpoint. */
export function playgroundHref(m: NamedModel, step: number): string {
  return `/playground?model=${encodeURIComponent(stepName(m, step))}`;
}
