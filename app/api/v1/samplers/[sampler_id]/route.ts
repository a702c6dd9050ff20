import { z } from 'zod';
import { methods, route } from '@/lib/api/route';
import { getSamplerResponseSchema } from '@/lib/schemas/tinker';
import { getSampler } from '@/lib/services/tinker/sampling';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/api/v1/samplers/[sampler_id]', {
  GET: route(
    {
      auth: 'tinker',
      tag: 'tinker',
      summary: "A sampling client's base model and weights path (the SDK loads its tokenizer from it)",
      params: z.object({ sampler_id: z.string().min(1).max(256) }),
      notFound: 'Sampling session not found',
      response: getSamplerResponseSchema,
    },
    async ({ principal, params }) => getSampler(principal, params.sampler_id),
  ),
});
