/** The SFT launch page's URL state: `?entity=` (see lib/client/entity.ts) and `?model=<model id>` to preselect one. */
export interface SftSearchParams {
  entity: string | undefined;
  model: string | undefined;
}

type RawSearchParams = Record<string, string | string[] | undefined>;

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function parseSftSearchParams(raw: RawSearchParams): SftSearchParams {
  const model = first(raw.model);
  return {
    entity: first(raw.entity) || undefined,
    // Only an id can preselect; anything else is ignored rather than shown as a broken choice.
    model: model && UUID.test(model) ? model.toLowerCase() : undefined,
  };
}
