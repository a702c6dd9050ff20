import { modelsFromSearchParam } from '@/lib/client/model-choice';

/**
 * The playground's URL state: `?entity=` and `?model=` — repeated for a side-by-side comparison
 * (`?model=tuneboard/tiny-random&model=ada/demo/m:step3`), so a comparison can be shared as a link.
 */
export interface PlaygroundSearchParams {
  entity: string | undefined;
  models: string[];
}

type RawSearchParams = Record<string, string | string[] | undefined>;

export function parsePlaygroundSearchParams(raw: RawSearchParams): PlaygroundSearchParams {
  const model = raw.model;
  const entity = Array.isArray(raw.entity) ? raw.entity[0] : raw.entity;
  return {
    entity: entity || undefined,
    models: modelsFromSearchParam(model === undefined ? [] : Array.isArray(model) ? model : [model]),
  };
}
