import { Decompress } from 'fzstd';
import { concatBytes } from '@/lib/bytes';
import { ApiError } from '@/lib/errors';

/**
 * zstd bodies: the SDK (≥ 0.25, with `proto_compress_fwdbwd`) compresses forward_backward bodies and says
 * `Content-Encoding: zstd`. Decompression is bounded: the frame headers are read first, so that neither a declared
 * content size past the limit nor a huge window (which fzstd would allocate up front) costs any memory, and the
 * output is counted block by block (at most 128 KiB each, 2 MiB for a run-length block) so that a zip bomb stops as
 * soon as it passes the limit.
 */

/** The server's body limit (docs/tinker.md §2.1: 413 past it), also the most a compressed body may expand to. */
export const MAX_DECOMPRESSED_BYTES = 256 * 1024 * 1024;

/** libzstd's default limit on a frame's window (ZSTD_WINDOWLOG_LIMIT_DEFAULT = 27): larger ones it refuses too. */
const MAX_WINDOW_BYTES = 2 ** 27;

const ZSTD_MAGIC = 0xfd2fb528;
const SKIPPABLE_MAGIC_MASK = 0xfffffff0;
const SKIPPABLE_MAGIC = 0x184d2a50;

function corrupt(detail: string): ApiError {
  return new ApiError('bad_request', `the zstd-compressed body is corrupt: ${detail}`);
}

function tooLarge(limitBytes: number): ApiError {
  return new ApiError('payload_too_large', `the zstd-compressed body expands to more than ${limitBytes} bytes`);
}

function u32(bytes: Uint8Array, at: number): number {
  return (bytes[at] | (bytes[at + 1] << 8) | (bytes[at + 2] << 16) | (bytes[at + 3] << 24)) >>> 0;
}

/** A little-endian unsigned integer of n ≤ 8 bytes (exact up to 2^53, beyond it only ever compared to a limit). */
function uintLE(bytes: Uint8Array, at: number, n: number): number {
  let value = 0;
  for (let i = n - 1; i >= 0; i--) value = value * 256 + bytes[at + i];
  return value;
}

/**
 * Walks the frames (RFC 8878, section 3.1) without decompressing: checks every header and block boundary, and refuses
 * declared content sizes whose sum passes the limit and windows larger than libzstd accepts.
 */
function scanFrames(bytes: Uint8Array, limitBytes: number): void {
  let at = 0;
  let declared: number | null = 0;
  const need = (n: number, what: string) => {
    if (bytes.length - at < n) throw corrupt(`truncated ${what}`);
  };
  while (at < bytes.length) {
    need(4, 'frame magic number');
    const magic = u32(bytes, at);
    if ((magic & SKIPPABLE_MAGIC_MASK) >>> 0 === SKIPPABLE_MAGIC) {
      need(8, 'skippable frame');
      const size = u32(bytes, at + 4);
      at += 8;
      need(size, 'skippable frame');
      at += size;
      continue;
    }
    if (magic !== ZSTD_MAGIC) throw corrupt('not a zstd frame (bad magic number)');
    at += 4;
    need(1, 'frame header');
    const descriptor = bytes[at++];
    const contentSizeFlag = descriptor >> 6;
    const singleSegment = (descriptor >> 5) & 1;
    const hasChecksum = (descriptor >> 2) & 1;
    const dictionaryFlag = descriptor & 3;
    if (descriptor & 8) throw corrupt('a reserved frame header bit is set');
    let window = 0;
    if (!singleSegment) {
      need(1, 'frame header');
      const w = bytes[at++];
      const base = 2 ** (10 + (w >> 3));
      window = base + (base / 8) * (w & 7);
    }
    const dictionaryBytes = [0, 1, 2, 4][dictionaryFlag];
    need(dictionaryBytes, 'frame header');
    if (dictionaryBytes > 0 && uintLE(bytes, at, dictionaryBytes) !== 0)
      throw corrupt('the frame needs a zstd dictionary; send it without one');
    at += dictionaryBytes;
    const sizeBytes = contentSizeFlag === 0 ? singleSegment : 1 << contentSizeFlag;
    need(sizeBytes, 'frame header');
    const contentSize = sizeBytes === 0 ? null : uintLE(bytes, at, sizeBytes) + (sizeBytes === 2 ? 256 : 0);
    at += sizeBytes;
    if (contentSize !== null && contentSize > limitBytes) throw tooLarge(limitBytes);
    if (window > MAX_WINDOW_BYTES)
      throw corrupt(
        `the frame asks for a ${window}-byte window, more than zstd's default limit of ${MAX_WINDOW_BYTES}`,
      );
    declared = contentSize === null || declared === null ? null : declared + contentSize;
    if (declared !== null && declared > limitBytes) throw tooLarge(limitBytes);
    for (let last = 0; !last;) {
      need(3, 'block header');
      const header = bytes[at] | (bytes[at + 1] << 8) | (bytes[at + 2] << 16);
      at += 3;
      last = header & 1;
      const type = (header >> 1) & 3;
      const size = header >>> 3;
      if (type === 3) throw corrupt('a block of the reserved type 3');
      const stored = type === 1 ? 1 : size;
      need(stored, 'block');
      at += stored;
    }
    if (hasChecksum) {
      need(4, 'frame checksum');
      at += 4;
    }
  }
}

/**
 * Decompresses a zstd body (one or more frames). Output past `limitBytes`: 413, refused before the output is all
 * there. Input that is not valid zstd: 400.
 */
export function decompressZstd(bytes: Uint8Array, limitBytes: number): Uint8Array {
  if (bytes.length === 0) throw corrupt('the body is empty');
  scanFrames(bytes, limitBytes);
  const chunks: Uint8Array[] = [];
  let total = 0;
  const stream = new Decompress((chunk) => {
    total += chunk.length;
    if (total > limitBytes) throw tooLarge(limitBytes);
    chunks.push(chunk);
  });
  try {
    stream.push(bytes, true);
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw corrupt(err instanceof Error ? err.message : String(err));
  }
  return chunks.length === 1 ? chunks[0] : concatBytes(chunks);
}

/**
 * A request body as its `Content-Encoding` says: none or `identity` as it is, `zstd` decompressed (at most
 * `limitBytes`), anything else 415.
 */
export function decodeContentEncoding(
  bytes: Uint8Array,
  contentEncoding: string | null | undefined,
  limitBytes = MAX_DECOMPRESSED_BYTES,
): Uint8Array {
  const encoding = (contentEncoding ?? '').trim().toLowerCase();
  if (encoding === '' || encoding === 'identity') return bytes;
  if (encoding === 'zstd') return decompressZstd(bytes, limitBytes);
  throw new ApiError(
    'unsupported_media_type',
    `Content-Encoding '${contentEncoding}' is not supported here: send the body as it is or zstd-compressed`,
  );
}
