import { methods, route } from '@/lib/api/route';
import {
  checkpointListSchema,
  deleteCheckpointsBodySchema,
  deleteCheckpointsResponseSchema,
  listCheckpointsQuerySchema,
} from '@/lib/schemas/checkpoints';
import { modelIdParamsSchema } from '@/lib/schemas/models';
import { deleteCheckpoints, listCheckpoints } from '@/lib/services/checkpoints';
import { MODEL_NOT_FOUND } from '@/lib/services/models';

export const dynamic = 'force-dynamic';

const params = modelIdParamsSchema;

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/preview/models/[model_id]/checkpoints', {
  GET: route(
    {
      summary: 'List checkpoints by step (cursor paging with after/limit/order)',
      tag: 'checkpoints',
      params,
      notFound: MODEL_NOT_FOUND,
      query: listCheckpointsQuerySchema,
      response: checkpointListSchema,
    },
    ({ principal, params, query }) => listCheckpoints(principal, params.model_id, query),
  ),
  DELETE: route(
    {
      summary: 'Delete the listed checkpoint steps',
      tag: 'checkpoints',
      params,
      notFound: MODEL_NOT_FOUND,
      body: deleteCheckpointsBodySchema,
      response: deleteCheckpointsResponseSchema,
    },
    ({ principal, params, body }) => deleteCheckpoints(principal, params.model_id, body.steps),
  ),
});
