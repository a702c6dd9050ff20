/**
 * The SFT launch page's URL state: `?entity=` (see lib/client/navigation/entity.ts), `?model=<model id>` to preselect one and
 * `?from=<step>` to start from that checkpoint.
 */
export interface SftSearchParams {
  entity: string | undefined;
  model: string | undefined;
  from: number | undefined;
}

type RawSearchParams = Record<string, string | string[] | undefined>;

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function parseSftSearchParams(raw: RawSearchParams): SftSearchParams {
  const model = first(raw.model);
  const from = Number(first(raw.from) ?? '');
  return {
    entity: first(raw.entity) || undefined,
    // Only an id can preselect; anything else is ignored rather than shown as a broken choice.
    model: model && UUID.test(model) ? model.toLowerCase() : undefined,
    from: first(raw.from) && Number.isSafeInteger(from) && from >= 0 ? from : undefined,
  };
}
