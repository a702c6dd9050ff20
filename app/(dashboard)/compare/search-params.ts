import { createLoader, createParser, parseAsString, parseAsStringLiteral } from 'nuqs/server';
import { COMPARE_AXES } from '@/lib/client/charts/run-comparison';

/** Model ids, comma-separated, in the order drawn; anything that is not an id is dropped (the API would refuse it). */
const idsParser = createParser({
  parse: (value) => {
    const ids = value
      .split(',')
      .map((s) => s.trim())
      .filter((s) => /^[0-9a-f-]{36}$/i.test(s));
    return ids.length ? [...new Set(ids)] : null;
  },
  serialize: (ids: string[]) => ids.join(','),
});

/**
 * The comparison page's URL state, so a comparison can be shared: `?models=a,b,c` or `?project=…` (with `?entity=`),
 * and `?axis=`.
 */
export const compareSearchParsers = {
  models: idsParser.withDefault([]),
  project: parseAsString.withDefault(''),
  entity: parseAsString,
  axis: parseAsStringLiteral(COMPARE_AXES).withDefault('gradient_step'),
};

export const parseCompareSearchParams = createLoader(compareSearchParsers);

/** The API's query for a selection in the URL, or null when nothing is selected. */
export function compareSelection(url: {
  models: readonly string[];
  project: string;
  entity: string | null;
}): { model_ids: string } | { project: string; entity?: string } | null {
  if (url.project) return { project: url.project, ...(url.entity ? { entity: url.entity } : {}) };
  return url.models.length > 0 ? { model_ids: url.models.join(',') } : null;
}

/** The comparison's query key: the page prefetches it on the server under the same key. */
export const compareQueryKey = (selection: Record<string, string>) => ['compare', selection] as const;
