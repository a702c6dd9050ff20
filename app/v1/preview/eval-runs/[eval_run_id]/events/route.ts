import { methods, route } from '@/lib/api/route';
import { evalEventListSchema, evalEventsQuerySchema, evalRunParamsSchema } from '@/lib/schemas/evals';
import { EVAL_RUN_NOT_FOUND, listEvalEvents } from '@/lib/services/evals';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/preview/eval-runs/[eval_run_id]/events', {
  GET: route(
    {
      summary: 'An eval run’s events after `after`, oldest first',
      tag: 'evals',
      extension: true,
      params: evalRunParamsSchema,
      notFound: EVAL_RUN_NOT_FOUND,
      query: evalEventsQuerySchema,
      response: evalEventListSchema,
    },
    ({ principal, params, query }) => listEvalEvents(principal, params.eval_run_id, query),
  ),
});
