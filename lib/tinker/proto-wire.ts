import { ApiError } from '@/lib/errors';

/**
 * A small protobuf reader and writer for the Tinker SDK's messages (lib/tinker/tinker_public.proto): the few wire
 * features those messages use, nothing generated. Reading is defensive because the bytes come from clients: every
 * length is checked against what is left, varints stop at 10 bytes, 64-bit integers must fit a JS number, unknown
 * fields of every wire type are skipped (groups iteratively, to a bounded depth), and every failure is an ApiError
 * (400) naming the message and field it was reading, e.g. `ForwardBackwardRequest.data[3].loss_fn_inputs["weights"]`.
 */

const WireType = { VARINT: 0, I64: 1, LEN: 2, SGROUP: 3, EGROUP: 4, I32: 5 } as const;
type WireTypeValue = (typeof WireType)[keyof typeof WireType];

const WIRE_NAMES = ['varint', 'fixed64', 'length-delimited', 'start-group', 'end-group', 'fixed32'];

/** How deep sub-readers and skipped groups may nest: far deeper than the Tinker messages (4), far below the stack. */
export const MAX_PROTO_DEPTH = 64;

const TWO_32 = 2 ** 32;
/** The largest high word of a uint64 whose value is still a safe integer (≤ 2^53 − 1). */
const SAFE_HIGH_WORD = 0x1fffff;

const utf8 = new TextDecoder('utf-8', { fatal: true });
const utf8Encoder = new TextEncoder();

interface Source {
  buf: Uint8Array;
  view: DataView;
}

/**
 * Reads one message: `while (r.next()) switch (r.field) { … default: r.skip(); }`. The value readers check that the
 * field arrived with the wire type its kind needs and name the field in errors.
 */
export class ProtoReader {
  /** The field number of the field `next()` stopped at. */
  field = 0;
  /** Its wire type. */
  wire: number = WireType.VARINT;
  private pos: number;
  private lo = 0;
  private hi = 0;

  private constructor(
    private readonly src: Source,
    /** Where this message is, for errors: `ForwardBackwardRequest.data[3]`. */
    readonly path: string,
    start: number,
    private readonly end: number,
    private readonly depth: number,
  ) {
    this.pos = start;
    if (depth > MAX_PROTO_DEPTH) this.fail(`messages nested more than ${MAX_PROTO_DEPTH} deep`);
  }

  /** A reader of a whole message; `name` is its type, the root of error paths. */
  static of(bytes: Uint8Array, name: string): ProtoReader {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    return new ProtoReader({ buf: bytes, view }, name, 0, bytes.length, 0);
  }

  /** A 400 naming this message (and `field`, when given). */
  fail(message: string, field?: string): never {
    const where = field === undefined ? this.path : `${this.path}.${field}`;
    throw new ApiError('bad_request', `malformed protobuf body at ${where}: ${message}`);
  }

  /** Moves to the next field's tag: false at the end of the message. */
  next(): boolean {
    if (this.pos >= this.end) return false;
    this.readVarint('a field tag');
    if (this.hi !== 0) this.fail('a field tag past 32 bits');
    const wire = this.lo & 7;
    const field = this.lo >>> 3;
    if (field === 0) this.fail('a field number 0');
    if (wire > WireType.I32) this.fail(`field ${field} has the invalid wire type ${wire}`);
    if (wire === WireType.EGROUP) this.fail(`field ${field} ends a group that was never started`);
    this.field = field;
    this.wire = wire;
    return true;
  }

  /** Skips the current field's value, whatever its wire type (a field this reader does not know). */
  skip(): void {
    if (this.wire !== WireType.SGROUP) {
      this.skipValue(this.wire);
      return;
    }
    // A group runs to the end-group tag of the same field number; nested groups are tracked on a stack, not by
    // recursion, so hostile nesting costs a bounded array.
    const open = [this.field];
    while (open.length > 0) {
      if (this.pos >= this.end) this.fail(`group ${open[open.length - 1]} is not closed`);
      this.readVarint('a field tag');
      const wire = this.lo & 7;
      const field = this.lo >>> 3;
      if (this.hi !== 0 || field === 0 || wire > WireType.I32) this.fail('an invalid tag inside a group');
      if (wire === WireType.SGROUP) {
        if (open.length >= MAX_PROTO_DEPTH) this.fail(`groups nested more than ${MAX_PROTO_DEPTH} deep`);
        open.push(field);
      } else if (wire === WireType.EGROUP) {
        if (open.pop() !== field) this.fail(`group ${field} closed where another group was open`);
      } else this.skipValue(wire);
    }
  }

  private skipValue(wire: number): void {
    switch (wire) {
      case WireType.VARINT:
        this.readVarint(`field ${this.field}`);
        return;
      case WireType.I64:
        this.advance(8, `field ${this.field}`);
        return;
      case WireType.I32:
        this.advance(4, `field ${this.field}`);
        return;
      default:
        this.advance(this.readLength(`field ${this.field}`), `field ${this.field}`);
    }
  }

  private expect(wire: WireTypeValue, name: string): void {
    if (this.wire !== wire)
      this.fail(`arrived as ${WIRE_NAMES[this.wire]}, expected ${WIRE_NAMES[wire]} (field ${this.field})`, name);
  }

  private advance(n: number, name: string): number {
    const at = this.pos;
    if (n > this.end - at) this.fail(`truncated: ${n} bytes announced, ${this.end - at} left`, name);
    this.pos = at + n;
    return at;
  }

  /** Reads a varint into lo/hi (the low and high 32 bits). */
  private readVarint(name: string): void {
    const buf = this.src.buf;
    let lo = 0;
    let hi = 0;
    for (let i = 0; ; i++) {
      if (this.pos >= this.end) this.fail('truncated varint', name);
      const b = buf[this.pos++];
      if (i < 4) lo |= (b & 0x7f) << (7 * i);
      else if (i === 4) {
        lo |= (b & 0x0f) << 28;
        hi |= (b & 0x7f) >> 4;
      } else hi |= (b & 0x7f) << (7 * i - 32);
      if (b < 0x80) break;
      if (i === 9) this.fail('a varint longer than 10 bytes', name);
    }
    this.lo = lo >>> 0;
    this.hi = hi >>> 0;
  }

  private readLength(name: string): number {
    this.readVarint(name);
    if (this.hi !== 0 || this.lo > this.end - this.pos)
      this.fail(`truncated: a length of ${this.hi * TWO_32 + this.lo} bytes, ${this.end - this.pos} left`, name);
    return this.lo;
  }

  /** A uint64 / uint32 field as a number (past 2^53: an error). */
  uint(name: string): number {
    this.expect(WireType.VARINT, name);
    this.readVarint(name);
    return this.uintValue(name);
  }

  private uintValue(name: string): number {
    if (this.hi > SAFE_HIGH_WORD) this.fail('an integer beyond 2^53', name);
    return this.hi * TWO_32 + this.lo;
  }

  /** An int64 field (two's complement) as a number; beyond ±(2^53 − 1): an error. */
  int64(name: string): number {
    this.expect(WireType.VARINT, name);
    this.readVarint(name);
    return this.int64Value(name);
  }

  private int64Value(name: string): number {
    if (this.hi < 0x80000000) return this.uintValue(name);
    const magnitudeHi = ~this.hi >>> 0;
    if (magnitudeHi > SAFE_HIGH_WORD) this.fail('an integer beyond -2^53', name);
    return -(magnitudeHi * TWO_32 + (~this.lo >>> 0) + 1);
  }

  /** An int32 (or enum) field: the low 32 bits, signed, as every protobuf runtime reads it. */
  int32(name: string): number {
    this.expect(WireType.VARINT, name);
    this.readVarint(name);
    return this.lo | 0;
  }

  /** A bool field: any non-zero varint is true. */
  bool(name: string): boolean {
    this.expect(WireType.VARINT, name);
    this.readVarint(name);
    return this.lo !== 0 || this.hi !== 0;
  }

  /** A double (fixed64) field. */
  double(name: string): number {
    this.expect(WireType.I64, name);
    return this.src.view.getFloat64(this.advance(8, name), true);
  }

  /** A float (fixed32) field. */
  float(name: string): number {
    this.expect(WireType.I32, name);
    return this.src.view.getFloat32(this.advance(4, name), true);
  }

  /** A bytes field: a view into the message's buffer, not a copy. */
  bytes(name: string): Uint8Array {
    this.expect(WireType.LEN, name);
    const n = this.readLength(name);
    const at = this.advance(n, name);
    return this.src.buf.subarray(at, at + n);
  }

  /** A string field (UTF-8, as proto3 requires of strings). */
  string(name: string): string {
    const bytes = this.bytes(name);
    try {
      return utf8.decode(bytes);
    } catch {
      return this.fail('a string that is not UTF-8', name);
    }
  }

  /** An embedded message field; `name` extends the error path (`data[3]`, `loss_fn_inputs["weights"]`). */
  message(name: string): ProtoReader {
    this.expect(WireType.LEN, name);
    const n = this.readLength(name);
    const at = this.advance(n, name);
    return new ProtoReader(this.src, `${this.path}.${name}`, at, at + n, this.depth + 1);
  }

  /**
   * One occurrence of a repeated int64 field, appended to `out`: packed (one length-delimited run) or not (one
   * varint); parsers must accept both.
   */
  int64s(name: string, out: number[]): void {
    this.repeatedVarints(name, out, () => this.int64Value(name));
  }

  /** One occurrence of a repeated int32 field, appended to `out` (packed or not). */
  int32s(name: string, out: number[]): void {
    this.repeatedVarints(name, out, () => this.lo | 0);
  }

  private repeatedVarints(name: string, out: number[], value: () => number): void {
    if (this.wire === WireType.VARINT) {
      this.readVarint(name);
      out.push(value());
      return;
    }
    this.expect(WireType.LEN, name);
    const n = this.readLength(name);
    const end = this.pos + n;
    // The packed run is read by this same reader; the end is checked against the run, not the message.
    while (this.pos < end) {
      this.readVarint(name);
      if (this.pos > end) this.fail('a packed varint runs past its field', name);
      out.push(value());
    }
  }
}

/** What the writer says when handed a value it cannot write: our own results are wrong, a 500. */
function notSafe(value: number): ApiError {
  return new ApiError('internal', `protobuf writer: ${value} is not a safe integer`);
}

/** Bytes written so far are kept in chunks and joined once by `finish()`; large byte fields are not copied before. */
const CHUNK = 4096;
/** Byte fields at least this long are referenced, not copied, until `finish()`. */
const REFERENCE_AT = 512;

/**
 * Writes one message. Embedded messages are written by their own ProtoWriter and added with `message()`, which
 * knows their length; nothing is copied until `finish()`.
 */
export class ProtoWriter {
  private parts: Uint8Array[] = [];
  private cur = new Uint8Array(CHUNK);
  private at = 0;
  private flushed = 0;

  /** Bytes written so far. */
  get length(): number {
    return this.flushed + this.at;
  }

  private room(n: number): void {
    if (this.cur.length - this.at >= n) return;
    this.flush();
    this.cur = new Uint8Array(Math.max(CHUNK, n));
  }

  private flush(): void {
    if (this.at === 0) return;
    this.parts.push(this.cur.subarray(0, this.at));
    this.flushed += this.at;
    this.cur = this.cur.subarray(this.at);
    this.at = 0;
  }

  /** A varint of a non-negative safe integer, or of a negative one as 10-byte two's complement (int32/int64). */
  private varint(value: number): void {
    this.room(10);
    const buf = this.cur;
    if (value >= 0 && value < 0x80) {
      buf[this.at++] = value;
      return;
    }
    let lo: number;
    let hi: number;
    if (value >= 0) {
      lo = value >>> 0;
      hi = Math.floor(value / TWO_32) >>> 0;
    } else {
      const magnitude = -value;
      lo = ~(magnitude >>> 0) + 1;
      hi = ~Math.floor(magnitude / TWO_32) + (lo === 0 ? 1 : 0);
      lo >>>= 0;
      hi >>>= 0;
    }
    while (hi !== 0 || lo > 0x7f) {
      buf[this.at++] = (lo & 0x7f) | 0x80;
      lo = ((lo >>> 7) | (hi << 25)) >>> 0;
      hi >>>= 7;
    }
    buf[this.at++] = lo;
  }

  private tag(field: number, wire: WireTypeValue): void {
    this.varint(field * 8 + wire);
  }

  /** An int32, int64, uint32, uint64, enum or bool field (numbers must be safe integers); zero is still written. */
  int(field: number, value: number): void {
    if (!Number.isSafeInteger(value)) throw notSafe(value);
    this.tag(field, WireType.VARINT);
    this.varint(value);
  }

  /** A double (fixed64) field. */
  double(field: number, value: number): void {
    this.tag(field, WireType.I64);
    this.room(8);
    new DataView(this.cur.buffer, this.cur.byteOffset + this.at, 8).setFloat64(0, value, true);
    this.at += 8;
  }

  /** A bytes field; a long value is kept by reference until finish(), so it must not change before. */
  bytes(field: number, value: Uint8Array): void {
    this.tag(field, WireType.LEN);
    this.varint(value.length);
    if (value.length >= REFERENCE_AT) {
      this.flush();
      this.parts.push(value);
      this.flushed += value.length;
      return;
    }
    this.room(value.length);
    this.cur.set(value, this.at);
    this.at += value.length;
  }

  /** A string field (UTF-8). */
  string(field: number, value: string): void {
    this.bytes(field, utf8Encoder.encode(value));
  }

  /** An embedded message (the writer must not be used afterwards). */
  message(field: number, sub: ProtoWriter): void {
    this.tag(field, WireType.LEN);
    this.varint(sub.length);
    sub.flush();
    this.flush();
    for (const part of sub.parts) this.parts.push(part);
    this.flushed += sub.flushed;
  }

  /** A packed repeated int64 / int32 field (nothing when empty, as proto3 writes it). */
  packedInts(field: number, values: readonly number[]): void {
    if (values.length === 0) return;
    const run = new ProtoWriter();
    for (const v of values) {
      if (!Number.isSafeInteger(v)) throw notSafe(v);
      run.varint(v);
    }
    // Length-delimited like an embedded message.
    this.message(field, run);
  }

  /** The message's bytes. */
  finish(): Uint8Array {
    this.flush();
    if (this.parts.length === 1) return this.parts[0];
    const out = new Uint8Array(this.flushed);
    let at = 0;
    for (const part of this.parts) {
      out.set(part, at);
      at += part.length;
    }
    return out;
  }
}
