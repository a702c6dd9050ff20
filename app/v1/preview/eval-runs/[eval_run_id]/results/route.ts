import { methods, route } from '@/lib/api/route';
import { evalResultListSchema, evalResultsQuerySchema, evalRunParamsSchema } from '@/lib/schemas/evals';
import { EVAL_RUN_NOT_FOUND, listEvalResults } from '@/lib/services/evals';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/preview/eval-runs/[eval_run_id]/results', {
  GET: route(
    {
      summary: 'An eval run’s results, one row per example with every target’s outputs and scores',
      description:
        '`filter=regressed` keeps examples whose mean score passed at target `a` and failed at `b`; `improved` the ' +
        'reverse; `changed` either. `a` and `b` must be targets of the run.',
      tag: 'evals',
      extension: true,
      params: evalRunParamsSchema,
      notFound: EVAL_RUN_NOT_FOUND,
      query: evalResultsQuerySchema,
      response: evalResultListSchema,
    },
    ({ principal, params, query }) => listEvalResults(principal, params.eval_run_id, query),
  ),
});
