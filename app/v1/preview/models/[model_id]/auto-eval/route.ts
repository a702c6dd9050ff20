import { methods, route } from '@/lib/api/route';
import { autoEvalBodySchema, autoEvalResponseSchema } from '@/lib/schemas/evals';
import { modelIdParamsSchema } from '@/lib/schemas/models';
import { getAutoEval, putAutoEval } from '@/lib/services/evals';
import { MODEL_NOT_FOUND } from '@/lib/services/models';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/preview/models/[model_id]/auto-eval', {
  GET: route(
    {
      summary: 'The model’s auto-eval setting (null: off)',
      tag: 'evals',
      extension: true,
      params: modelIdParamsSchema,
      notFound: MODEL_NOT_FOUND,
      response: autoEvalResponseSchema,
    },
    ({ principal, params }) => getAutoEval(principal, params.model_id),
  ),
  PUT: route(
    {
      summary: 'Evaluate every new checkpoint of the model on an eval set (null switches it off)',
      tag: 'evals',
      extension: true,
      params: modelIdParamsSchema,
      notFound: MODEL_NOT_FOUND,
      body: autoEvalBodySchema.nullable(),
      response: autoEvalResponseSchema,
    },
    ({ principal, params, body }) => putAutoEval(principal, params.model_id, body),
  ),
});
