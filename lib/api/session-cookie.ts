import 'server-only';
import { SESSION_COOKIE } from './auth';
import { ApiError } from '@/lib/errors';

/** HttpOnly so scripts can't read it; SameSite=Lax as the first CSRF line; Secure whenever served over https. */
export function sessionCookie(req: Request, token: string, expiresAt: Date): string {
  const https = new URL(req.url).protocol === 'https:' || req.headers.get('x-forwarded-proto') === 'https';
  const maxAge = Math.max(0, Math.floor((expiresAt.getTime() - Date.now()) / 1000));
  return `${SESSION_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${https ? '; Secure' : ''}`;
}

export function clearedSessionCookie(): string {
  return `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0`;
}

/**
 * Routes that set the session cookie (sign-in, sign-up) are open to anyone, so the usual cookie-based CSRF
 * check never runs there; yet another site could post a form to them and sign the victim's browser into
 * the attacker's account (login CSRF). Browsers say where a request comes from (Sec-Fetch-Site, Origin):
 * anything but our own origin is refused. Scripts send neither header and stay welcome. The body must be
 * declared JSON: a cross-site form can only send text/plain, urlencoded or multipart bodies without a
 * preflight.
 */
export function assertSessionWriteAllowed(req: Request): void {
  const site = req.headers.get('sec-fetch-site');
  const crossSite = () =>
    new ApiError('forbidden', "Cross-site request rejected: sign in from this server's own pages");
  if (site !== null && site !== 'same-origin' && site !== 'none') throw crossSite();
  const origin = req.headers.get('origin');
  if (origin !== null) {
    const host = req.headers.get('x-forwarded-host') ?? req.headers.get('host');
    let originHost: string | null = null;
    try {
      originHost = new URL(origin).host;
    } catch {
      // "null" (sandboxed frames, data: URLs) or garbage: never our own page
    }
    if (!host || originHost !== host) throw crossSite();
  }
  const type = (req.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
  if (type !== 'application/json') {
    throw new ApiError('unsupported_media_type', "Unsupported Media Type: send the body as 'application/json'");
  }
}
