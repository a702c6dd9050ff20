/*
 * Byte helpers with no dependencies, for every layer: the database thread, the wire decoders (lib/tinker) and the
 * dataset reader (lib/schemas, which browser code imports too).
 */

/**
 * The parts in one fresh Uint8Array that owns its whole buffer, so that it can be transferred (moved) to or
 * from a worker thread. Buffer.concat may hand back a slice of Node's shared allocation pool, which
 * postMessage can only copy, buffer and all.
 */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}
