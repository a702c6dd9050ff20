import { methods, route } from '@/lib/api/route';
import { modelIdParamsSchema } from '@/lib/schemas/models';
import { historyQuerySchema, historySchema } from '@/lib/schemas/trajectories';
import { MODEL_NOT_FOUND } from '@/lib/services/models';
import { getHistory } from '@/lib/services/run-history';

export const dynamic = 'force-dynamic';

/** Extension: the run's metric history per step, downsampled for charts. */
export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/preview/models/[model_id]/history', {
  GET: route(
    {
      summary: 'Metric history of the model’s run, downsampled per series',
      tag: 'trajectories',
      extension: true,
      params: modelIdParamsSchema,
      notFound: MODEL_NOT_FOUND,
      query: historyQuerySchema,
      response: historySchema,
    },
    ({ principal, params, query }) => getHistory(principal, params.model_id, query),
  ),
});
