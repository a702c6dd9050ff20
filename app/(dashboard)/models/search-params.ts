import { createLoader, createParser, parseAsString } from 'nuqs/server';

/** Text cut to what the API accepts: a longer value from a hand-edited URL would only earn a 422. */
const textUpTo = (max: number, trim = false) =>
  createParser({
    parse: (value) => (trim ? value.trim() : value).slice(0, max),
    serialize: (value: string) => value,
  });

/**
 * The models page's URL state: `?entity=` (see lib/client/navigation/entity.ts), `?search=`, `?project=`, `?base_model=`.
 * Parsed on the server for the prefetch, kept in the URL by the client (nuqs).
 */
export const modelsSearchParsers = {
  entity: parseAsString,
  search: textUpTo(200, true).withDefault(''),
  project: textUpTo(128).withDefault(''),
  base_model: textUpTo(256).withDefault(''),
};

export const parseModelsSearchParams = createLoader(modelsSearchParsers);
