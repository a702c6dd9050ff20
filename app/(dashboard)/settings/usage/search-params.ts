import { createLoader, parseAsNumberLiteral, parseAsString, parseAsStringLiteral } from 'nuqs/server';
import { USAGE_DAY_OPTIONS } from '@/lib/client/queries/usage';

export const DEFAULT_USAGE_DAYS = 30;

/**
 * The usage page's URL state: `?entity=`, `?days=` (7, 30 or 90) and `?group=` (model or project); anything else
 * reads as the default. Parsed on the server for the prefetch, kept in the URL by the client (nuqs).
 */
export const usageSearchParsers = {
  entity: parseAsString,
  days: parseAsNumberLiteral(USAGE_DAY_OPTIONS).withDefault(DEFAULT_USAGE_DAYS),
  group: parseAsStringLiteral(['model', 'project'] as const).withDefault('model'),
};

export const parseUsageSearchParams = createLoader(usageSearchParsers);
