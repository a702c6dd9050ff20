import { methods, route } from '@/lib/api/route';
import { evalSetParamsSchema, evalSetSchema } from '@/lib/schemas/evals';
import { deleteEvalSet, EVAL_SET_NOT_FOUND, getEvalSet } from '@/lib/services/evals';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/preview/eval-sets/[eval_set_id]', {
  GET: route(
    {
      summary: 'One eval set (one version)',
      tag: 'evals',
      extension: true,
      params: evalSetParamsSchema,
      notFound: EVAL_SET_NOT_FOUND,
      response: evalSetSchema,
    },
    ({ principal, params }) => getEvalSet(principal, params.eval_set_id),
  ),
  DELETE: route(
    {
      summary: 'Delete an eval set version and its finished runs (409 while a QUEUED or RUNNING run uses it)',
      tag: 'evals',
      extension: true,
      params: evalSetParamsSchema,
      notFound: EVAL_SET_NOT_FOUND,
      status: 204,
    },
    async ({ principal, params }) => {
      await deleteEvalSet(principal, params.eval_set_id);
      return new Response(null, { status: 204 });
    },
  ),
});
