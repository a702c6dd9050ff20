import { methods, route } from '@/lib/api/route';
import { modelIdParamsSchema } from '@/lib/schemas/models';
import { logResponseSchema } from '@/lib/schemas/trajectories';
import { logBodySchema } from '@/lib/schemas/trajectory-input';
import { MODEL_NOT_FOUND } from '@/lib/services/models';
import { logTrajectories } from '@/lib/services/trajectories';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/preview/models/[model_id]/log', {
  POST: route(
    {
      summary: 'Log trajectory groups and store their metrics on the latest checkpoint',
      tag: 'trajectories',
      params: modelIdParamsSchema,
      notFound: MODEL_NOT_FOUND,
      body: logBodySchema,
      bodyLimit: 'large',
      // Parsed, checked and stringified for storage on the body thread when large (lib/body/prepared.ts), so
      // that a 200 MiB log does not stall every other request; NUL is allowed under trajectory_groups there.
      offload: 'log',
      response: logResponseSchema,
    },
    ({ principal, params, prepared }) => logTrajectories(principal, params.model_id, prepared),
  ),
});
