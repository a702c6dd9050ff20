import { methods, route } from '@/lib/api/route';
import { clientScoresBodySchema, evalRunParamsSchema, evalRunSchema } from '@/lib/schemas/evals';
import { EVAL_RUN_NOT_FOUND, postClientScores } from '@/lib/services/evals';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/preview/eval-runs/[eval_run_id]/scores', {
  POST: route(
    {
      summary: 'Post a client scorer’s scores (0 to 1) for samples of the run',
      tag: 'evals',
      extension: true,
      params: evalRunParamsSchema,
      notFound: EVAL_RUN_NOT_FOUND,
      body: clientScoresBodySchema,
      response: evalRunSchema,
    },
    ({ principal, params, body }) => postClientScores(principal, params.eval_run_id, body),
  ),
});
