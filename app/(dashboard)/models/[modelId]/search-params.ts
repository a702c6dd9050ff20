/** The model page's URL state: `?tab=trajectories`, `?step=`, `?split=` (and `?entity=`, see lib/client/entity.ts). */
export type ModelTab = 'overview' | 'trajectories';

export interface ModelSearchParams {
  tab: ModelTab;
  /** The trajectories tab's step; null = the latest logged step. */
  step: number | null;
  split: string;
}

type RawSearchParams = Record<string, string | string[] | undefined>;

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

export function parseModelSearchParams(raw: RawSearchParams): ModelSearchParams {
  const step = first(raw.step);
  // A hand-edited step that is not a non-negative integer would only earn a 422 from the API.
  const parsedStep = step !== undefined && /^\d{1,9}$/.test(step) ? Number(step) : null;
  return {
    tab: first(raw.tab) === 'trajectories' ? 'trajectories' : 'overview',
    step: parsedStep,
    split: (first(raw.split) ?? '').slice(0, 64),
  };
}
