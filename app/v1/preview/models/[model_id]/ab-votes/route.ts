import { methods, route } from '@/lib/api/route';
import { abVoteCreatedSchema, abVoteSummarySchema, createAbVoteBodySchema } from '@/lib/schemas/ab-votes';
import { modelIdParamsSchema } from '@/lib/schemas/models';
import { abVoteSummary, createAbVote } from '@/lib/services/ab-votes';
import { MODEL_NOT_FOUND } from '@/lib/services/models';

export const dynamic = 'force-dynamic';

/** Extension: blind A/B votes between two checkpoints (the playground's), and their tally per pair of steps. */
export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/preview/models/[model_id]/ab-votes', {
  GET: route(
    {
      summary: 'Blind A/B votes between checkpoints, tallied per pair of steps',
      tag: 'models',
      extension: true,
      params: modelIdParamsSchema,
      notFound: MODEL_NOT_FOUND,
      response: abVoteSummarySchema,
    },
    ({ principal, params }) => abVoteSummary(principal, params.model_id),
  ),
  POST: route(
    {
      summary: 'Record a blind A/B vote between two checkpoints',
      tag: 'models',
      extension: true,
      params: modelIdParamsSchema,
      notFound: MODEL_NOT_FOUND,
      body: createAbVoteBodySchema,
      response: abVoteCreatedSchema,
    },
    ({ principal, params, body }) => createAbVote(principal, params.model_id, body),
  ),
});
