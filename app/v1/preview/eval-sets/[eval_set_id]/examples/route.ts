import { methods, route } from '@/lib/api/route';
import { evalExampleListSchema, evalSetParamsSchema, pageByIndexQuerySchema } from '@/lib/schemas/evals';
import { EVAL_SET_NOT_FOUND, listEvalExamples } from '@/lib/services/evals';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/preview/eval-sets/[eval_set_id]/examples', {
  GET: route(
    {
      summary: 'A page of an eval set’s examples in file order',
      tag: 'evals',
      extension: true,
      params: evalSetParamsSchema,
      notFound: EVAL_SET_NOT_FOUND,
      query: pageByIndexQuerySchema,
      response: evalExampleListSchema,
    },
    ({ principal, params, query }) => listEvalExamples(principal, params.eval_set_id, query),
  ),
});
