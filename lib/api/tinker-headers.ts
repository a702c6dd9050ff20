import 'server-only';

/**
 * The SDK's `X-Idempotency-Key` (one per submission, repeated on its own retries: docs/tinker.md §2.3), bounded so
 * that a hostile value cannot bloat the index it is stored in.
 */
export function idempotencyKey(req: Request): string | null {
  const value = req.headers.get('x-idempotency-key');
  if (!value) return null;
  return value.length <= 200 ? value : null;
}

/** Whether the caller reads protobuf results (SDK 0.25 accepts nothing else, 0.24 both: docs/tinker.md §2.2). */
export function acceptsProtobuf(req: Request): boolean {
  return (req.headers.get('accept') ?? '').toLowerCase().includes('application/x-protobuf');
}

/**
 * The server's origin as the client reached it, for absolute links (a redirect's Location that urllib follows): a
 * reverse proxy's X-Forwarded-Proto and X-Forwarded-Host when present, else the request's own URL.
 */
export function requestOrigin(req: Request): string {
  const url = new URL(req.url);
  const proto = req.headers.get('x-forwarded-proto')?.split(',')[0]?.trim();
  const host = req.headers.get('x-forwarded-host')?.split(',')[0]?.trim() ?? req.headers.get('host') ?? url.host;
  return `${proto === 'https' || proto === 'http' ? proto : url.protocol.replace(':', '')}://${host}`;
}
