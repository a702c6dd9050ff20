import { createParser, parseAsStringLiteral } from 'nuqs';

/** The model page's URL state: `?tab=trajectories`, `?step=`, `?split=`, `?compare=` (and `?entity=`, see lib/client/navigation/entity.ts). */
export const MODEL_TABS = ['overview', 'trajectories'] as const;
export type ModelTab = (typeof MODEL_TABS)[number];

// A hand-edited step that is not a non-negative integer would only earn a 422 from the API: it reads as none.
const stepParser = createParser({
  parse: (value) => (/^\d{1,9}$/.test(value) ? Number(value) : null),
  serialize: (step: number) => String(step),
});

const splitParser = createParser({
  parse: (value) => value.slice(0, 64),
  serialize: (split: string) => split,
});

/** Read and written by the client through nuqs (history replaced, no server round trip). */
export const modelSearchParsers = {
  tab: parseAsStringLiteral(MODEL_TABS).withDefault('overview'),
  /** The trajectories tab's step; null = the latest logged step. */
  step: stepParser,
  split: splitParser.withDefault(''),
  /** The step the trajectories tab compares `step` with; null = the step before it. */
  compare: stepParser,
};
