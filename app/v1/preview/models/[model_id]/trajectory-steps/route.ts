import { methods, route } from '@/lib/api/route';
import { modelIdParamsSchema } from '@/lib/schemas/models';
import { listTrajectoryStepsQuerySchema, trajectoryStepListSchema } from '@/lib/schemas/trajectories';
import { MODEL_NOT_FOUND } from '@/lib/services/models';
import { listTrajectorySteps } from '@/lib/services/trajectory-steps';

export const dynamic = 'force-dynamic';

/** Extension: the steps that hold trajectories, so that people can browse them without knowing a step. */
export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/preview/models/[model_id]/trajectory-steps', {
  GET: route(
    {
      summary: 'Steps with stored trajectory groups, newest first, with counts and rewards per split',
      tag: 'trajectories',
      extension: true,
      params: modelIdParamsSchema,
      notFound: MODEL_NOT_FOUND,
      query: listTrajectoryStepsQuerySchema,
      response: trajectoryStepListSchema,
    },
    ({ principal, params, query }) => listTrajectorySteps(principal, params.model_id, query),
  ),
});
