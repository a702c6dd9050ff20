import 'server-only';
import { SESSION_COOKIE } from './auth';

/** HttpOnly so scripts can't read it; SameSite=Lax as the first CSRF line; Secure whenever served over https. */
export function sessionCookie(req: Request, token: string, expiresAt: Date): string {
  const https = new URL(req.url).protocol === 'https:' || req.headers.get('x-forwarded-proto') === 'https';
  const maxAge = Math.max(0, Math.floor((expiresAt.getTime() - Date.now()) / 1000));
  return `${SESSION_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${https ? '; Secure' : ''}`;
}

export function clearedSessionCookie(): string {
  return `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0`;
}
