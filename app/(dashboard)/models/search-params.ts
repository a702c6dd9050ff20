/** The models page's URL state: `?entity=` (see lib/client/entity.ts), `?search=`, `?project=`, `?base_model=`. */
export interface ModelsSearchParams {
  entity: string | undefined;
  search: string;
  project: string;
  baseModel: string;
}

type RawSearchParams = Record<string, string | string[] | undefined>;

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

export function parseModelsSearchParams(raw: RawSearchParams): ModelsSearchParams {
  return {
    entity: first(raw.entity) || undefined,
    // The API caps search at 200 characters; a longer one from a hand-edited URL would only earn a 422.
    search: (first(raw.search) ?? '').trim().slice(0, 200),
    project: (first(raw.project) ?? '').slice(0, 128),
    baseModel: (first(raw.base_model) ?? '').slice(0, 256),
  };
}
