import { z } from 'zod';
import { methods, route } from '@/lib/api/route';
import { createTeamBodySchema, teamSchema } from '@/lib/schemas/accounts';
import { createTeam, listTeams } from '@/lib/services/accounts';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods({
  GET: route({ response: z.object({ object: z.literal('list'), data: z.array(teamSchema) }) }, async ({ principal }) => ({
    object: 'list' as const,
    data: await listTeams(principal),
  })),
  POST: route({ body: createTeamBodySchema, response: teamSchema, status: 201 }, ({ principal, body }) =>
    createTeam(principal, body.name),
  ),
});
