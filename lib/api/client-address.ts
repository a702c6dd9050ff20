import 'server-only';

/**
 * The caller's address for per-address limits (sign-in's `TUNEBOARD_LOGIN_ADDRESS_ATTEMPTS`), resolved once per
 * request by the server's request listener (lib/api/fast-path.ts) from the socket and, only as far as
 * `TUNEBOARD_TRUSTED_PROXIES` says, from X-Forwarded-For.
 *
 * Both paths a request can take carry the result: a Request the fast path makes has it under CLIENT_ADDRESS; a
 * request handed to Next.js has its X-Forwarded-For replaced with it before Next sees it (Next only fills that
 * header when it is absent, so a client could otherwise name any address it liked, and the fast path, which
 * builds its Request from the raw headers, had no address at all: the per-address limit never applied there).
 */
export const CLIENT_ADDRESS = Symbol.for('tuneboard.clientAddress');

/**
 * The client's address: with no trusted proxy, the socket's peer; behind `trustedProxies` reverse proxies, each of
 * which appends the address it saw to X-Forwarded-For, the entry that many places from the right of the chain
 * `X-Forwarded-For entries…, socket address` (so 1 is the last entry, the one the nearest proxy wrote). Entries to
 * the left of that were written by the client or by hops nobody vouches for, and are never used.
 */
export function resolveClientAddress(
  socketAddress: string | undefined,
  forwardedFor: string | string[] | undefined,
  trustedProxies: number,
): string | null {
  if (trustedProxies <= 0 || forwardedFor === undefined) return trim(socketAddress);
  const header = Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor;
  const chain = header.split(',').map((entry) => entry.trim());
  if (socketAddress) chain.push(socketAddress);
  // Fewer hops than configured (a client that reached the server past its proxies): the leftmost is all there is.
  return trim(chain[Math.max(0, chain.length - 1 - trustedProxies)]);
}

function trim(address: string | undefined): string | null {
  if (!address) return null;
  // Node reports IPv4 clients of a dual-stack socket as `::ffff:1.2.3.4`: one client, one bucket.
  const plain = address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
  return plain.slice(0, 64);
}

/**
 * The address resolved for `req` (see the module comment). A Request made by neither path (a test calling a handler
 * directly) is taken at its word: the last X-Forwarded-For entry.
 */
export function clientAddress(req: Request): string | null {
  const resolved = (req as unknown as Record<symbol, string | null | undefined>)[CLIENT_ADDRESS];
  if (resolved !== undefined) return resolved;
  const last = req.headers.get('x-forwarded-for')?.split(',').at(-1)?.trim();
  return last ? last.slice(0, 64) : null;
}
