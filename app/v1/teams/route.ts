import { methods, route } from '@/lib/api/route';
import { createTeamBodySchema, teamListSchema, teamSchema } from '@/lib/schemas/accounts';
import { createTeam, listTeams } from '@/lib/services/accounts';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/teams', {
  GET: route(
    {
      summary: 'Teams the caller belongs to, with members',
      tag: 'accounts',
      extension: true,
      response: teamListSchema,
    },
    async ({ principal }) => ({
      object: 'list' as const,
      data: await listTeams(principal),
    }),
  ),
  POST: route(
    {
      summary: 'Create a team owned by the caller',
      tag: 'accounts',
      extension: true,
      body: createTeamBodySchema,
      response: teamSchema,
      status: 201,
    },
    ({ principal, body }) => createTeam(principal, body.name),
  ),
});
