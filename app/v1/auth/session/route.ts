import { methods, route } from '@/lib/api/route';
import { sessionSchema } from '@/lib/schemas/accounts';
import { toSessionDto } from '@/lib/services/accounts';

export const dynamic = 'force-dynamic';

/** Who am I: the caller's user and entities (works with a key or the session cookie). */
export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/auth/session', {
  GET: route(
    { summary: 'The caller: user and entities', tag: 'accounts', extension: true, response: sessionSchema },
    async ({ principal }) => toSessionDto(principal),
  ),
});
