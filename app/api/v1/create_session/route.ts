import { methods, route } from '@/lib/api/route';
import { createSessionRequestSchema, createSessionResponseSchema } from '@/lib/schemas/tinker';
import { createSession } from '@/lib/services/tinker/training';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/api/v1/create_session', {
  POST: route(
    {
      auth: 'tinker',
      tag: 'tinker',
      summary:
        'Start a Tinker SDK session (a ServiceClient); its models go to project_id (`project` or `entity/project`; default `tinker`)',
      body: createSessionRequestSchema,
      response: createSessionResponseSchema,
    },
    async ({ principal, body }) => createSession(principal, body),
  ),
});
