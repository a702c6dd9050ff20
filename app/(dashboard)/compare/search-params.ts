import { createLoader, createParser, parseAsString, parseAsStringLiteral } from 'nuqs/server';
import { COMPARE_AXES } from '@/lib/client/run-comparison';

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
