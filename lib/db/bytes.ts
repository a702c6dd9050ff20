import { concatBytes } from '@/lib/bytes';

/**
 * A batch of serialised protocol messages ready to be moved to a worker thread: the small messages gathered into
 * fresh buffers, and every message of at least `moveAt` bytes left as it is, its buffer moved rather than copied.
 *
 * Only for messages node-postgres' serializer wrote: each one it writes at that size is a view of a buffer its
 * writer allocated for it alone and dropped once it handed the message over (a buffer that small would come from
 * Node's shared pool, which must never be moved). Copying a Bind that carries a 64 MiB /log row into one batch held
 * the request thread 30–60 ms per row, page faults of the fresh buffer included.
 */
export function packForTransfer(
  parts: readonly Uint8Array[],
  moveAt: number,
): { parts: Uint8Array[]; transfer: ArrayBuffer[] } {
  const out: Uint8Array[] = [];
  const transfer = new Set<ArrayBuffer>();
  let small: Uint8Array[] = [];
  const gather = () => {
    if (small.length === 0) return;
    const joined = concatBytes(small);
    out.push(joined);
    transfer.add(joined.buffer as ArrayBuffer);
    small = [];
  };
  for (const part of parts) {
    if (part.byteLength < moveAt) {
      small.push(part);
      continue;
    }
    gather();
    out.push(part);
    transfer.add(part.buffer as ArrayBuffer);
  }
  gather();
  return { parts: out, transfer: [...transfer] };
}
