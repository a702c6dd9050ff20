import { z } from 'zod';
import { methods, route } from '@/lib/api/route';
import { projectListSchema } from '@/lib/schemas/models';
import { listProjects } from '@/lib/services/models';

export const dynamic = 'force-dynamic';

/** Extension: projects of the caller's entities (created on first use by model creation). */
export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/preview/projects', {
  GET: route(
    {
      summary: 'Projects of the caller’s entities',
      tag: 'models',
      extension: true,
      query: z.object({ entity: z.string().optional() }),
      response: projectListSchema,
    },
    ({ principal, query }) => listProjects(principal, query.entity),
  ),
});
