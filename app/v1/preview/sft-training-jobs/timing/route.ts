import { methods, route } from '@/lib/api/route';
import { sftTimingQuerySchema, sftTimingSchema } from '@/lib/schemas/sft-timing';
import { sftTiming } from '@/lib/services/sft-timing';

export const dynamic = 'force-dynamic';

/** Extension: how fast a base model's SFT jobs ran, per worker: the SFT form's time estimate. */
export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/preview/sft-training-jobs/timing', {
  GET: route(
    {
      summary: 'Measured pace of a base model’s completed SFT jobs, per worker (seconds per step and overhead)',
      tag: 'training-jobs',
      extension: true,
      query: sftTimingQuerySchema,
      response: sftTimingSchema,
    },
    ({ query }) => sftTiming(query.base_model),
  ),
});
