import { z } from 'zod';
import { methods, route } from '@/lib/api/route';
import { memberRemovedSchema } from '@/lib/schemas/accounts';
import { idSchema } from '@/lib/schemas/common';
import { removeTeamMember } from '@/lib/services/accounts';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/teams/[team]/members/[user_id]', {
  DELETE: route(
    {
      summary: 'Remove a member from a team (or leave it)',
      tag: 'accounts',
      extension: true,
      params: z.object({ team: z.string(), user_id: idSchema }),
      notFound: 'Member not found',
      response: memberRemovedSchema,
    },
    ({ principal, params }) => removeTeamMember(principal, params.team, params.user_id),
  ),
});
