import 'server-only';
/**
 * The caller's address for per-address limits: the last entry of X-Forwarded-For, which is the one the
 * nearest hop wrote. `next start` fills the header with the socket's address when the client sent none; a
 * reverse proxy in front (nginx `$proxy_add_x_forwarded_for`, most load balancers) appends the address it
 * saw. Without a proxy a client can send its own header, so per-address limits are only as strong as the
 * deployment; per-account limits hold regardless.
 */
export function clientAddress(req: Request): string | null {
  const header = req.headers.get('x-forwarded-for') ?? req.headers.get('x-real-ip');
  const last = header?.split(',').at(-1)?.trim();
  return last ? last.slice(0, 64) : null;
}
