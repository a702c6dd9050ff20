/**
 * A clear sentence for the storage failures an operator can fix (disk full, read-only mount, permissions),
 * or null for anything else. Follows `cause` chains, since streams and pipelines wrap the original error.
 */
export function storageFaultMessage(err: unknown): string | null {
  const seen = new Set<unknown>();
  for (
    let e = err as { code?: unknown; cause?: unknown } | undefined;
    e && typeof e === 'object' && !seen.has(e);
    e = e.cause as typeof e
  ) {
    seen.add(e);
    switch (e.code) {
      case 'ENOSPC':
      case 'EDQUOT':
        return 'The artifact store is full (no space left on its device)';
      case 'EROFS':
        return 'The artifact store is read-only';
      case 'EACCES':
      case 'EPERM':
        return 'The artifact store is not writable (permission denied)';
    }
  }
  return null;
}
