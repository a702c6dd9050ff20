import { z } from 'zod';
import { methods, route } from '@/lib/api/route';
import { idSchema } from '@/lib/schemas/common';
import { removeTeamMember } from '@/lib/services/accounts';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods({
  DELETE: route(
    {
      summary: 'Remove a member from a team (or leave it)',
      tag: 'accounts',
      extension: true,
      params: z.object({ team: z.string(), user_id: idSchema }),
      notFound: 'Member not found',
      response: z.object({ removed: z.literal(true) }),
    },
    ({ principal, params }) => removeTeamMember(principal, params.team, params.user_id),
  ),
});
