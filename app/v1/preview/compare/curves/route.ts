import { methods, route } from '@/lib/api/route';
import { compareCurvesQuerySchema, compareCurvesSchema } from '@/lib/schemas/comparison';
import { compareCurves } from '@/lib/services/run-comparison';

export const dynamic = 'force-dynamic';

/** Extension: the training curves of two to eight models in one answer (the dashboard's run comparison). */
export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/preview/compare/curves', {
  GET: route(
    {
      summary: 'Compare runs: the training curve of each of 2–8 models, downsampled per series',
      tag: 'trajectories',
      extension: true,
      query: compareCurvesQuerySchema,
      response: compareCurvesSchema,
    },
    ({ principal, query }) => compareCurves(principal, query),
  ),
});
