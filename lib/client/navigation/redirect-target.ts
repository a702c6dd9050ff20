export const DEFAULT_SIGNED_IN_PATH = '/models';

/**
 * The `next` parameter of the sign-in pages, if it is a path on this site. Anything else (another
 * origin, `//host`, `/\host`, a scheme) would make the sign-in form an open redirect.
 */
export function safeNextPath(raw: string | null | undefined): string {
  if (!raw || !raw.startsWith('/') || raw.startsWith('//') || raw.startsWith('/\\')) return DEFAULT_SIGNED_IN_PATH;
  try {
    const url = new URL(raw, 'http://tuneboard.invalid');
    if (url.origin !== 'http://tuneboard.invalid') return DEFAULT_SIGNED_IN_PATH;
    // The API is not a page to land on.
    if (url.pathname === '/v1' || url.pathname.startsWith('/v1/')) return DEFAULT_SIGNED_IN_PATH;
    return `${url.pathname}${url.search}${url.hash}`;
  } catch {
    return DEFAULT_SIGNED_IN_PATH;
  }
}

export function signInPath(next?: string | null): string {
  const target = next ? safeNextPath(next) : DEFAULT_SIGNED_IN_PATH;
  return target === DEFAULT_SIGNED_IN_PATH ? '/sign-in' : `/sign-in?next=${encodeURIComponent(target)}`;
}
