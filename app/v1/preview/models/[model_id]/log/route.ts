import { methods, route } from '@/lib/api/route';
import { modelIdParamsSchema } from '@/lib/schemas/models';
import { logBodySchema, logResponseSchema } from '@/lib/schemas/trajectories';
import { MODEL_NOT_FOUND } from '@/lib/services/models';
import { logTrajectories } from '@/lib/services/trajectories';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods({
  POST: route(
    {
      summary: 'Log trajectory groups and store their metrics on the latest checkpoint',
      tag: 'trajectories',
      params: modelIdParamsSchema,
      notFound: MODEL_NOT_FOUND,
      body: logBodySchema,
      bodyLimit: 'large',
      nulAllowedUnder: ['trajectory_groups'],
      response: logResponseSchema,
    },
    ({ principal, params, body }) => logTrajectories(principal, params.model_id, body.split, body.trajectory_groups),
  ),
});
