import { methods, route } from '@/lib/api/route';
import { deleteModelResponseSchema, modelIdParamsSchema, modelSummarySchema } from '@/lib/schemas/models';
import { deleteModel, getModel, MODEL_NOT_FOUND } from '@/lib/services/models';

export const dynamic = 'force-dynamic';

const params = modelIdParamsSchema;

export const { GET, POST, PUT, PATCH, DELETE } = methods({
  /** Extension: one model with its latest step. */
  GET: route({ params, notFound: MODEL_NOT_FOUND, response: modelSummarySchema }, ({ principal, params }) =>
    getModel(principal, params.model_id),
  ),
  DELETE: route({ params, notFound: MODEL_NOT_FOUND, response: deleteModelResponseSchema }, ({ principal, params }) =>
    deleteModel(principal, params.model_id),
  ),
});
