import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiError } from '@/lib/errors';
import { decodeContentEncoding, decompressZstd } from './zstd';

const FIXTURES = path.resolve(import.meta.dirname, '../../tests/fixtures/tinker/requests');
const fixture = (name: string) => new Uint8Array(readFileSync(path.join(FIXTURES, name)));

/** The ApiError `fn` throws. */
function apiError(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    return err as ApiError;
  }
  throw new Error('did not throw');
}

/**
 * A zstd frame of `blocks` run-length blocks of 128 KiB each (4 bytes apiece): a bomb of blocks × 128 KiB that
 * declares no content size, with a 128 KiB window.
 */
function rleBomb(blocks: number): Uint8Array {
  const header = [0x28, 0xb5, 0x2f, 0xfd, 0x00, 7 << 3];
  const out = new Uint8Array(header.length + blocks * 4);
  out.set(header);
  for (let i = 0; i < blocks; i++) {
    const last = i === blocks - 1 ? 1 : 0;
    const word = (131072 << 3) | (1 << 1) | last; // size, RLE type, last flag
    out.set([word & 0xff, (word >> 8) & 0xff, (word >> 16) & 0xff, 0x61], header.length + i * 4);
  }
  return out;
}

describe('decompressZstd', () => {
  it('decompresses what Python zstandard wrote: one frame, a streamed frame, a skippable frame and two frames', () => {
    const plain = fixture('cross_entropy.pb');
    expect(decompressZstd(fixture('cross_entropy_zstd.pb.zst'), 1 << 20)).toEqual(plain);
    expect(decompressZstd(fixture('cross_entropy_zstd_frames.pb.zst'), 1 << 20)).toEqual(plain);
    expect(decompressZstd(fixture('ppo_zstd_streamed.pb.zst'), 1 << 20)).toEqual(fixture('ppo.pb'));
  });

  it('accepts output exactly at the limit', () => {
    const bomb = rleBomb(8);
    expect(decompressZstd(bomb, 8 * 131072).length).toBe(8 * 131072);
    expect(apiError(() => decompressZstd(bomb, 8 * 131072 - 1)).status).toBe(413);
  });

  it('stops a bomb as soon as its output passes the limit, without making the rest', () => {
    // 65,536 blocks: 8 GiB of output from 256 KiB of input. Decompressing it all would take seconds and run out of
    // memory; refused after the first 9 blocks it takes milliseconds.
    const bomb = rleBomb(65_536);
    const heapBefore = process.memoryUsage().arrayBuffers;
    const started = performance.now();
    const err = apiError(() => decompressZstd(bomb, 1 << 20));
    const elapsed = performance.now() - started;
    expect(err.status).toBe(413);
    expect(err.message).toBe('the zstd-compressed body expands to more than 1048576 bytes');
    expect(elapsed).toBeLessThan(500);
    expect(process.memoryUsage().arrayBuffers - heapBefore).toBeLessThan(64 << 20);
  });

  it("refuses a declared content size past the limit before decompressing anything (Python's bomb)", () => {
    const err = apiError(() => decompressZstd(fixture('zstd_bomb_declared.pb.zst'), 1 << 20));
    expect(err.status).toBe(413);
    expect(apiError(() => decompressZstd(fixture('zstd_bomb.pb.zst'), 1 << 20)).status).toBe(413);
    expect(decompressZstd(fixture('zstd_bomb.pb.zst'), 32 << 20).length).toBe(32 << 20);
  });

  it('refuses a window larger than libzstd accepts, before fzstd would allocate it', () => {
    const err = apiError(() => decompressZstd(fixture('zstd_huge_window.pb.zst'), 1 << 30));
    expect(err.status).toBe(400);
    expect(err.message).toContain('asks for a 1073741824-byte window');
  });

  it.each([
    ['an empty body', new Uint8Array(0), 'the body is empty'],
    ['another magic number', new Uint8Array([1, 2, 3, 4, 5]), 'bad magic number'],
    ['a truncated header', new Uint8Array([0x28, 0xb5, 0x2f, 0xfd]), 'truncated frame header'],
    [
      'a reserved header bit',
      new Uint8Array([0x28, 0xb5, 0x2f, 0xfd, 0x08, 0x38, 1, 0, 0]),
      'reserved frame header bit',
    ],
    ['a dictionary', new Uint8Array([0x28, 0xb5, 0x2f, 0xfd, 0x01, 0x38, 0x07, 1, 0, 0]), 'needs a zstd dictionary'],
    ['a reserved block type', fixture('zstd_corrupt.pb.zst'), 'reserved type 3'],
    ['a truncated block', rleBomb(2).subarray(0, 9), 'truncated block'],
    ['a missing checksum', fixture('cross_entropy_zstd.pb.zst').slice(0, -2), 'truncated frame checksum'],
  ])('refuses %s with a 400', (_what, body, text) => {
    const err = apiError(() => decompressZstd(body, 1 << 20));
    expect(err.status).toBe(400);
    expect(err.message).toContain(text);
    expect(err.message).toContain('zstd-compressed body is corrupt');
  });

  it('turns whatever fzstd throws on corrupt blocks into a 400', () => {
    const good = fixture('cross_entropy_zstd.pb.zst');
    let refused = 0;
    for (let i = 0; i < 2000; i++) {
      const body = good.slice();
      // Flip bytes past the frame header, where the block contents are.
      for (let j = 0; j < 3; j++) body[12 + ((i * 7 + j * 13) % (body.length - 16))] ^= 1 + ((i + j) % 255);
      try {
        decompressZstd(body, 1 << 20);
      } catch (err) {
        expect(err).toBeInstanceOf(ApiError);
        expect([400, 413]).toContain((err as ApiError).status);
        refused++;
      }
    }
    expect(refused).toBeGreaterThan(0);
  });
});

describe('decodeContentEncoding', () => {
  it('passes an unencoded body through and decompresses zstd', () => {
    const plain = fixture('cross_entropy.pb');
    expect(decodeContentEncoding(plain, null)).toBe(plain);
    expect(decodeContentEncoding(plain, ' Identity ')).toBe(plain);
    expect(decodeContentEncoding(fixture('cross_entropy_zstd.pb.zst'), 'ZSTD')).toEqual(plain);
  });

  it('answers another encoding with a 415', () => {
    const err = apiError(() => decodeContentEncoding(new Uint8Array([0x1f, 0x8b]), 'gzip'));
    expect(err.status).toBe(415);
    expect(err.message).toBe(
      "Content-Encoding 'gzip' is not supported here: send the body as it is or zstd-compressed",
    );
  });
});
