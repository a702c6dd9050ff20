import { createLoader, parseAsString, parseAsStringLiteral } from 'nuqs/server';
import { RESULT_FILTERS } from '@/lib/client/evals/evals';

/**
 * The run page's URL state, so that a filtered view can be shared: `?filter=regressed|improved|changed` between
 * targets `?a=` and `?b=` (full target names), and `?after=` the results page's cursor.
 */
export const evalRunSearchParsers = {
  filter: parseAsStringLiteral(RESULT_FILTERS).withDefault('all'),
  a: parseAsString,
  b: parseAsString,
  after: parseAsString,
};

export const loadEvalRunSearchParams = createLoader(evalRunSearchParsers);
