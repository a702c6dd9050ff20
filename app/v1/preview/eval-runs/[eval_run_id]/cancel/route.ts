import { methods, route } from '@/lib/api/route';
import { evalRunParamsSchema, evalRunSchema } from '@/lib/schemas/evals';
import { cancelEvalRun, EVAL_RUN_NOT_FOUND } from '@/lib/services/evals';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/preview/eval-runs/[eval_run_id]/cancel', {
  POST: route(
    {
      summary: 'Cancel a QUEUED or RUNNING eval run (idempotent; 409 once COMPLETED or FAILED); finished samples stay',
      tag: 'evals',
      extension: true,
      params: evalRunParamsSchema,
      notFound: EVAL_RUN_NOT_FOUND,
      response: evalRunSchema,
    },
    ({ principal, params }) => cancelEvalRun(principal, params.eval_run_id),
  ),
});
