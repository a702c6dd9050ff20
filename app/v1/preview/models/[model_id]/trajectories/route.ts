import { methods, route } from '@/lib/api/route';
import { modelIdParamsSchema } from '@/lib/schemas/models';
import { listTrajectoriesQuerySchema, trajectoryGroupListSchema } from '@/lib/schemas/trajectories';
import { MODEL_NOT_FOUND } from '@/lib/services/models';
import { listTrajectoryGroups } from '@/lib/services/trajectories';

export const dynamic = 'force-dynamic';

/** Extension: logged and trained trajectory groups. */
export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/preview/models/[model_id]/trajectories', {
  GET: route(
    {
      summary: 'Stored trajectory groups (logged and trained), by step and split',
      tag: 'trajectories',
      extension: true,
      params: modelIdParamsSchema,
      notFound: MODEL_NOT_FOUND,
      query: listTrajectoriesQuerySchema,
      response: trajectoryGroupListSchema,
    },
    ({ principal, params, query }) => listTrajectoryGroups(principal, params.model_id, query),
  ),
});
