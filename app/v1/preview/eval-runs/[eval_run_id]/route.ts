import { methods, route } from '@/lib/api/route';
import { evalRunParamsSchema, evalRunSchema } from '@/lib/schemas/evals';
import { EVAL_RUN_NOT_FOUND, getEvalRun } from '@/lib/services/evals';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/preview/eval-runs/[eval_run_id]', {
  GET: route(
    {
      summary: 'One eval run with its progress and summary',
      tag: 'evals',
      extension: true,
      params: evalRunParamsSchema,
      notFound: EVAL_RUN_NOT_FOUND,
      response: evalRunSchema,
    },
    ({ principal, params }) => getEvalRun(principal, params.eval_run_id),
  ),
});
