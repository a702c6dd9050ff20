import 'server-only';
import { ApiError } from '@/lib/errors';
import type { ErrorFlavor } from './respond';
import { API_KEY_PREFIX } from '@/lib/services/credentials';
import { principalFromApiKey, principalFromSession, SESSION_COOKIE, type Principal } from '@/lib/services/accounts';
import { isValidWorkerToken } from '@/lib/jobs/server/worker-token';

export { SESSION_COOKIE };

export function readCookie(req: Request, name: string): string | undefined {
  const header = req.headers.get('cookie');
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      try {
        return decodeURIComponent(part.slice(eq + 1).trim());
      } catch {
        // Not percent-encoding we ever wrote (`%ZZ`, a lone surrogate): not our cookie, so no session rather than a
        // 500; a later cookie of the same name (another path's) may still be.
      }
    }
  }
  return undefined;
}

function unauthenticated(flavor: ErrorFlavor): ApiError {
  return flavor === 'chat'
    ? new ApiError('unauthenticated', 'Authentication failed', { type: 'AuthenticationError' })
    : new ApiError('unauthenticated', 'Not authenticated');
}

/**
 * Cookie-authenticated writes must come from our own pages. Bearer-key requests need no such check:
 * a browser never attaches the key by itself. SameSite=Lax already blocks most cross-site posts; the
 * Origin / Sec-Fetch-Site check closes the rest (same-site subdomains, old browsers).
 */
export function assertSameOrigin(req: Request): void {
  if (['GET', 'HEAD', 'OPTIONS'].includes(req.method)) return;
  const site = req.headers.get('sec-fetch-site');
  if (site === 'same-origin') return;
  const origin = req.headers.get('origin');
  const host = req.headers.get('x-forwarded-host') ?? req.headers.get('host');
  if (origin && host) {
    try {
      if (new URL(origin).host === host) return;
    } catch {
      // malformed Origin falls through to the rejection
    }
  }
  throw new ApiError('forbidden', 'Cross-site request rejected: use an API key for requests from other origins');
}

/** Resolves the caller from `Authorization: Bearer` (API key) or the dashboard session cookie. */
export async function authenticate(req: Request, flavor: ErrorFlavor): Promise<Principal> {
  const header = req.headers.get('authorization');
  if (header !== null) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match || !match[1].startsWith(API_KEY_PREFIX)) throw unauthenticated(flavor);
    const principal = await principalFromApiKey(match[1]);
    if (!principal) throw unauthenticated(flavor);
    return principal;
  }
  const token = readCookie(req, SESSION_COOKIE);
  if (token) {
    const principal = await principalFromSession(token);
    if (principal) {
      assertSameOrigin(req);
      return principal;
    }
  }
  throw unauthenticated(flavor);
}

/** Worker routes: `Authorization: Bearer <worker token>`; user keys and sessions are not accepted there. */
export function authenticateWorker(req: Request): void {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.get('authorization') ?? '');
  if (!match || !isValidWorkerToken(match[1])) throw new ApiError('unauthenticated', 'Not authenticated');
}

/**
 * The Tinker SDK's credential (docs/tinker.md §2.1): `X-API-Key: tml-<Tuneboard key>`; the SDK refuses keys without
 * that prefix, so a Tuneboard key is written with it. A plain `Authorization: Bearer <key>` is accepted too.
 */
export async function authenticateTinker(req: Request): Promise<Principal> {
  const header = req.headers.get('x-api-key');
  if (header !== null) {
    const key = header.trim().replace(/^tml-/, '');
    const principal = key.startsWith(API_KEY_PREFIX) ? await principalFromApiKey(key) : null;
    if (!principal) {
      throw new ApiError(
        'unauthenticated',
        'Not authenticated: set TINKER_API_KEY to tml- followed by a Tuneboard API key (tml-tb_…), from Settings → API keys',
      );
    }
    return principal;
  }
  if (req.headers.get('authorization') !== null) return authenticate(req, 'preview');
  throw new ApiError(
    'unauthenticated',
    'Not authenticated: send X-API-Key: tml-<Tuneboard API key> (the Tinker SDK does so from TINKER_API_KEY)',
  );
}
