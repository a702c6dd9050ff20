import { createLoader, parseAsNativeArrayOf, parseAsString } from 'nuqs/server';
import { modelsFromSearchParam } from '@/lib/client/model-choice';

/**
 * The playground's URL state: `?entity=` (see lib/client/entity.ts) and `?model=`, repeated for a side-by-side
 * comparison (`?model=tuneboard/tiny-random&model=ada/demo/m:step3`), so a comparison can be shared as a link.
 * Parsed on the server for the first panes, kept in the URL by the client (nuqs) as panes change.
 */
export const playgroundSearchParsers = {
  entity: parseAsString,
  model: parseAsNativeArrayOf(parseAsString),
};

const loadPlaygroundSearchParams = createLoader(playgroundSearchParsers);

/** The panes a visit opens with: `?model=` values trimmed, de-duplicated, at most four. */
export async function initialPlaygroundModels(
  searchParams: Promise<Record<string, string | string[] | undefined>>,
): Promise<string[]> {
  return modelsFromSearchParam((await loadPlaygroundSearchParams(searchParams)).model);
}
