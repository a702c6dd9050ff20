import { json } from '@/lib/api/respond';
import { methods, route } from '@/lib/api/route';
import { sessionCookie } from '@/lib/api/session-cookie';
import { sessionSchema, signUpBodySchema } from '@/lib/schemas/accounts';
import { principalFromSession, signUp, toSessionDto } from '@/lib/services/accounts';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/auth/sign-up', {
  POST: route(
    {
      summary: 'Create an account; sets the session cookie',
      tag: 'accounts',
      extension: true,
      auth: 'public',
      setsSession: true,
      response: sessionSchema,
      status: 201,
      body: signUpBodySchema,
    },
    async ({ req, body }) => {
      const { token, expiresAt } = await signUp(body);
      const principal = await principalFromSession(token);
      return json(toSessionDto(principal!), {
        status: 201,
        headers: { 'set-cookie': sessionCookie(req, token, expiresAt) },
      });
    },
  ),
});
