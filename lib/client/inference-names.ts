/**
 * Every form a client may name a trained model by in /v1/chat/completions (compat §2.1): the plain
 * `entity/project/name` (latest step), a pinned `…:stepN`, the W&B artifact URI ART's clients send,
 * and the model id.
 */
export interface InferenceName {
  label: string;
  value: string;
}

export function modelBaseName(m: { entity: string; project: string; name: string }): string {
  return `${m.entity}/${m.project}/${m.name}`;
}

export function stepName(m: { entity: string; project: string; name: string }, step: number): string {
  return `${modelBaseName(m)}:step${step}`;
}

export function inferenceNames(
  m: { id: string; entity: string; project: string; name: string },
  step: number | null,
): InferenceName[] {
  const base = modelBaseName(m);
  const names: InferenceName[] = [{ label: 'Latest', value: base }];
  if (step !== null) {
    names.push({ label: `Step ${step}`, value: stepName(m, step) });
    names.push({ label: 'Artifact', value: `wandb-artifact:///${base}:step${step}` });
  }
  names.push({ label: 'Model id', value: m.id });
  return names;
}

/** The playground preselects a model by name; pinned to a step so the chat matches that checkpoint. */
export function playgroundHref(m: { entity: string; project: string; name: string }, step: number): string {
  return `/playground?model=${encodeURIComponent(stepName(m, step))}`;
}
