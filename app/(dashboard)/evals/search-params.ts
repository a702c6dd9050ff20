import { createLoader, parseAsString } from 'nuqs/server';

/** The Evals page's URL state: runs of one model (`?model_id=`, the model page's link) or one set (`?set=`). */
export const evalsSearchParsers = {
  entity: parseAsString,
  model_id: parseAsString,
  set: parseAsString,
};

export const loadEvalsSearchParams = createLoader(evalsSearchParsers);
