import { assertSameOrigin, readCookie, SESSION_COOKIE } from '@/lib/api/auth';
import { signOutResultSchema } from '@/lib/schemas/accounts';
import { json } from '@/lib/api/respond';
import { methods, route } from '@/lib/api/route';
import { clearedSessionCookie } from '@/lib/api/session-cookie';
import { signOut } from '@/lib/services/accounts';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/auth/sign-out', {
  POST: route(
    {
      summary: 'Sign out; clears the session',
      tag: 'accounts',
      extension: true,
      auth: 'public',
      response: signOutResultSchema,
    },
    async ({ req }) => {
      const token = readCookie(req, SESSION_COOKIE);
      // Another site must not be able to sign the user out.
      if (token) {
        assertSameOrigin(req);
        await signOut(token);
      }
      return json({ signed_out: true }, { headers: { 'set-cookie': clearedSessionCookie() } });
    },
  ),
});
