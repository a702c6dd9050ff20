import { methods, route } from '@/lib/api/route';
import {
  createEvalRunBodySchema,
  evalRunListSchema,
  evalRunSchema,
  listEvalRunsQuerySchema,
} from '@/lib/schemas/evals';
import { createEvalRun, listEvalRuns } from '@/lib/services/evals';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/preview/eval-runs', {
  POST: route(
    {
      summary: 'Start an eval run: score targets (models or checkpoints) on an eval set',
      description:
        'Targets, scorers (regex patterns, JSON schemas, judge models) and sampling are checked now: 422 naming the ' +
        'bad one. The run is QUEUED and executes on the server through the chat backends.',
      tag: 'evals',
      extension: true,
      body: createEvalRunBodySchema,
      response: evalRunSchema,
      status: 201,
    },
    ({ principal, body }) => createEvalRun(principal, body),
  ),
  GET: route(
    {
      summary: 'Eval runs of the caller’s entities, newest first',
      tag: 'evals',
      extension: true,
      query: listEvalRunsQuerySchema,
      response: evalRunListSchema,
    },
    ({ principal, query }) => listEvalRuns(principal, query),
  ),
});
