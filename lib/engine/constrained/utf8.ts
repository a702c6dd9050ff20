/**
 * Code-point ranges → UTF-8 byte-range sequences (the construction of Rust's regex-syntax `Utf8Sequences`):
 * every range of scalar values becomes a short list of sequences such as [E0][A0–BF][80–BF], each the
 * product of its byte ranges, together matching exactly the UTF-8 encodings of the range. This is what
 * turns an automaton over characters into one over bytes. Surrogates (U+D800–U+DFFF) have no UTF-8
 * encoding and are dropped.
 */

export type ByteRange = readonly [number, number];

const MAX_SCALAR = 0x10ffff;

export function utf8Encode(cp: number): number[] {
  if (cp < 0x80) return [cp];
  if (cp < 0x800) return [0xc0 | (cp >> 6), 0x80 | (cp & 0x3f)];
  if (cp < 0x10000) return [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f)];
  return [0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 0x3f), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f)];
}

function utf8Length(cp: number): number {
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

/** Byte-range sequences matching exactly the UTF-8 encodings of the scalar values in [lo, hi]. */
export function utf8Sequences(lo: number, hi: number): ByteRange[][] {
  const out: ByteRange[][] = [];
  const stack: Array<[number, number]> = [[Math.max(0, lo), Math.min(MAX_SCALAR, hi)]];
  outer: while (stack.length) {
    const [s, e] = stack.pop() as [number, number];
    if (s > e) continue;
    // Cut out the surrogate gap, then split where the encoded length changes.
    if (s <= 0xdfff && e >= 0xd800) {
      stack.push([0xe000, e], [s, 0xd7ff]);
      continue;
    }
    for (const edge of [0x7f, 0x7ff, 0xffff]) {
      if (s <= edge && e > edge) {
        stack.push([edge + 1, e], [s, edge]);
        continue outer;
      }
    }
    if (e <= 0x7f) {
      out.push([[s, e]]);
      continue;
    }
    const n = utf8Length(s);
    // Split until every continuation position spans either one value or the full 80–BF range below it.
    for (let i = 1; i < n; i++) {
      const m = (1 << (6 * i)) - 1;
      if ((s & ~m) !== (e & ~m)) {
        if ((s & m) !== 0) {
          stack.push([(s | m) + 1, e], [s, s | m]);
          continue outer;
        }
        if ((e & m) !== m) {
          stack.push([e & ~m, e], [s, (e & ~m) - 1]);
          continue outer;
        }
      }
    }
    const a = utf8Encode(s);
    const b = utf8Encode(e);
    out.push(a.map((x, i): ByteRange => [x, b[i]]));
  }
  // Stack order pops the low halves first, so sequences come out ascending.
  return out;
}
