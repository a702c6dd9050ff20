import { methods, route } from '@/lib/api/route';
import { createSftJobBodySchema, jobCreatedSchema } from '@/lib/schemas/training-jobs';
import { createSftJob } from '@/lib/services/training-jobs';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods({
  POST: route({ body: createSftJobBodySchema, response: jobCreatedSchema }, ({ principal, body }) =>
    createSftJob(principal, body),
  ),
});
