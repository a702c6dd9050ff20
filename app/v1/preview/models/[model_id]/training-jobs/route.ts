import { methods, route } from '@/lib/api/route';
import { modelIdParamsSchema } from '@/lib/schemas/models';
import { listJobsQuerySchema, trainingJobListSchema } from '@/lib/schemas/training-jobs';
import { MODEL_NOT_FOUND } from '@/lib/services/models';
import { listJobsOfModel } from '@/lib/services/training-jobs';

export const dynamic = 'force-dynamic';

/** Extension: a model's training jobs, newest first. */
export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/preview/models/[model_id]/training-jobs', {
  GET: route(
    {
      summary: 'Training jobs of a model, newest first',
      tag: 'training-jobs',
      extension: true,
      params: modelIdParamsSchema,
      notFound: MODEL_NOT_FOUND,
      query: listJobsQuerySchema,
      response: trainingJobListSchema,
    },
    ({ principal, params, query }) => listJobsOfModel(principal, params.model_id, query),
  ),
});
