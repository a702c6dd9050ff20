import { methods, route } from '@/lib/api/route';
import { compareQuerySchema, comparisonSchema } from '@/lib/schemas/comparison';
import { compareRuns } from '@/lib/services/run-comparison';

export const dynamic = 'force-dynamic';

/** Extension: two to eight models side by side (the dashboard's run comparison). */
export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/preview/compare', {
  GET: route(
    {
      summary: 'Compare runs: configuration, status, duration, final and best metrics of 2–8 models',
      tag: 'trajectories',
      extension: true,
      query: compareQuerySchema,
      response: comparisonSchema,
    },
    ({ principal, query }) => compareRuns(principal, query),
  ),
});
