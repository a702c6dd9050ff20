import { serialize } from 'pg-protocol';
import { describe, expect, it } from 'vitest';
import { packForTransfer } from './bytes';

describe('packForTransfer', () => {
  it('gathers small parts into buffers of their own and passes large ones through, in order', () => {
    const a = Buffer.from('ab');
    const b = Buffer.from('c');
    const large = new Uint8Array(64).fill(7);
    const c = Buffer.from('de');
    const { parts, transfer } = packForTransfer([a, b, large, c], 64);
    expect(parts.map((p) => Buffer.from(p).toString('latin1'))).toEqual(['abc', '\x07'.repeat(64), 'de']);
    expect(parts[1]).toBe(large);
    // Each gathered buffer is the whole of its ArrayBuffer, never a slice of Node's pool.
    expect(parts[0].byteLength).toBe(parts[0].buffer.byteLength);
    expect(new Set(transfer).size).toBe(3);
    expect(transfer).toContain(large.buffer);
  });

  it('names a buffer shared by two large parts once (postMessage refuses a buffer listed twice)', () => {
    const whole = new Uint8Array(256);
    const { parts, transfer } = packForTransfer([whole.subarray(0, 128), whole.subarray(128)], 64);
    expect(parts).toHaveLength(2);
    expect(transfer).toEqual([whole.buffer]);
    expect(() => structuredClone(parts, { transfer })).not.toThrow();
  });

  // What moving the large parts relies on: node-postgres' serializer writes each message into a buffer it then
  // drops. Were it to reuse that buffer, moving a message away would break the next message serialized.
  it("moves a serialized Bind without harm to node-postgres' next messages", () => {
    const value = Buffer.alloc(512 * 1024, 3);
    const bind = serialize.bind({ statement: 's1', values: [value] });
    const copy = Buffer.from(bind);
    const { parts, transfer } = packForTransfer(
      [serialize.parse({ text: 'select $1' }), bind, serialize.sync()],
      256 * 1024,
    );
    expect(transfer).toContain(bind.buffer);
    const moved = structuredClone(parts, { transfer });
    expect(bind.byteLength).toBe(0); // detached: it went to the receiver
    expect(Buffer.from(moved[1]).equals(copy)).toBe(true);
    expect(value.byteLength).toBe(512 * 1024); // the caller's value was copied by the serializer, not moved
    const next = serialize.bind({ statement: 's1', values: [Buffer.alloc(600 * 1024, 4)] });
    expect(next.byteLength).toBeGreaterThan(600 * 1024);
    expect(serialize.bind({ statement: 's1', values: ['x'] }).byteLength).toBeGreaterThan(0);
  });
});
