import { methods, route } from '@/lib/api/route';
import { createSamplingSessionRequestSchema, createSamplingSessionResponseSchema } from '@/lib/schemas/tinker';
import { createSamplingSession } from '@/lib/services/tinker/sampling';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/api/v1/create_sampling_session', {
  POST: route(
    {
      auth: 'tinker',
      tag: 'tinker',
      summary:
        'A sampling client: what asample samples from, a base model or sampler weights (tinker://…/sampler_weights/…)',
      body: createSamplingSessionRequestSchema,
      response: createSamplingSessionResponseSchema,
    },
    async ({ principal, body }) => createSamplingSession(principal, body),
  ),
});
