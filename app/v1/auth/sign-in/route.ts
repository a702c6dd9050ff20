import { clientAddress } from '@/lib/api/client-address';
import { json } from '@/lib/api/respond';
import { methods, route } from '@/lib/api/route';
import { sessionCookie } from '@/lib/api/session-cookie';
import { sessionSchema, signInBodySchema } from '@/lib/schemas/accounts';
import { principalFromSession, signIn, toSessionDto } from '@/lib/services/accounts';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/auth/sign-in', {
  POST: route(
    {
      summary: 'Sign in; sets the session cookie',
      tag: 'accounts',
      extension: true,
      auth: 'public',
      setsSession: true,
      response: sessionSchema,
      body: signInBodySchema,
    },
    async ({ req, body }) => {
      const { token, expiresAt } = await signIn(body.email, body.password, clientAddress(req));
      const principal = await principalFromSession(token);
      return json(toSessionDto(principal!), { headers: { 'set-cookie': sessionCookie(req, token, expiresAt) } });
    },
  ),
});
