import 'server-only';
import { cookies, headers } from 'next/headers';
import { redirect } from 'next/navigation';
import { cache } from 'react';
import { signInPath } from '@/lib/client/navigation/redirect-target';
import { principalFromSession, SESSION_COOKIE, type Principal } from '@/lib/services/accounts';
import { REQUEST_PATH_HEADER } from './request-path';

/**
 * The signed-in user of this request, read straight from the service layer (no HTTP round trip to
 * our own API). Cached per request, so the layout and the page share one database lookup.
 */
export const currentPrincipal = cache(async (): Promise<Principal | null> => {
  const token = (await cookies()).get(SESSION_COOKIE)?.value;
  return token ? principalFromSession(token) : null;
});

/** The signed-in user, or a redirect to the sign-in page that brings them back here afterwards. */
export async function requirePrincipal(): Promise<Principal> {
  const principal = await currentPrincipal();
  if (principal) return principal;
  redirect(signInPath((await headers()).get(REQUEST_PATH_HEADER)));
}

/** The origin clients should call, for copy-paste examples: the proxy's public host when there is one. */
export async function requestOrigin(): Promise<string> {
  const h = await headers();
  const host = h.get('x-forwarded-host') ?? h.get('host') ?? 'localhost:3000';
  const proto = h.get('x-forwarded-proto')?.split(',')[0]?.trim() || 'http';
  return `${proto}://${host}`;
}
