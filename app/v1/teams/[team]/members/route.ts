import { z } from 'zod';
import { methods, route } from '@/lib/api/route';
import { addMemberBodySchema, teamSchema } from '@/lib/schemas/accounts';
import { addTeamMember } from '@/lib/services/accounts';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/teams/[team]/members', {
  POST: route(
    {
      summary: 'Add a member to a team by email (owners and admins)',
      tag: 'accounts',
      extension: true,
      params: z.object({ team: z.string() }),
      body: addMemberBodySchema,
      response: teamSchema,
    },
    ({ principal, params, body }) => addTeamMember(principal, params.team, body.email, body.role),
  ),
});
