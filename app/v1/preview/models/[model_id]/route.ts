import { methods, route } from '@/lib/api/route';
import { modelDetailSchema } from '@/lib/schemas/evals';
import { deleteModelResponseSchema, modelIdParamsSchema } from '@/lib/schemas/models';
import { deleteModel, getModel, MODEL_NOT_FOUND } from '@/lib/services/models';

export const dynamic = 'force-dynamic';

const params = modelIdParamsSchema;

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/preview/models/[model_id]', {
  /** Extension: one model with its latest step. */
  GET: route(
    {
      summary: 'Get one model with its latest step',
      tag: 'models',
      extension: true,
      params,
      notFound: MODEL_NOT_FOUND,
      response: modelDetailSchema,
    },
    ({ principal, params }) => getModel(principal, params.model_id),
  ),
  DELETE: route(
    {
      summary: 'Delete a model, its checkpoints, artifacts, run history and trajectories',
      tag: 'models',
      params,
      notFound: MODEL_NOT_FOUND,
      response: deleteModelResponseSchema,
    },
    ({ principal, params }) => deleteModel(principal, params.model_id),
  ),
});
