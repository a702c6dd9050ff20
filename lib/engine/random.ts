/**
 * Seedable deterministic PRNG (xoshiro128**, seeded through SplitMix64). Identical seeds give identical
 * streams on every platform, which is what makes seeded sampling and weight init reproducible; bitwise
 * equality with torch's generator is not a goal (docs/contract.md §8.6).
 */
export class Generator {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;
  private spareNormal: number | null = null;

  /** `seed` is any integer in the signed or unsigned 64-bit range; bigint keeps it exact beyond 2^53. */
  constructor(seed: number | bigint) {
    let x = BigInt.asUintN(64, typeof seed === 'bigint' ? seed : BigInt(Math.trunc(seed)));
    const next = (): bigint => {
      x = BigInt.asUintN(64, x + 0x9e3779b97f4a7c15n);
      let z = x;
      z = BigInt.asUintN(64, (z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n);
      z = BigInt.asUintN(64, (z ^ (z >> 27n)) * 0x94d049bb133111ebn);
      return z ^ (z >> 31n);
    };
    const a = next();
    const b = next();
    this.s0 = Number(a & 0xffffffffn) >>> 0;
    this.s1 = Number(a >> 32n) >>> 0;
    this.s2 = Number(b & 0xffffffffn) >>> 0;
    this.s3 = Number(b >> 32n) >>> 0;
    // xoshiro's all-zero state is a fixed point; SplitMix64 never produces it, but guard anyway.
    if ((this.s0 | this.s1 | this.s2 | this.s3) === 0) this.s0 = 1;
  }

  nextUint32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5), 7), 9) >>> 0;
    const t = this.s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3, 11);
    return result;
  }

  /** Uniform in [0, 1) with 53 random bits. */
  random(): number {
    const hi = this.nextUint32() >>> 5; // 27 bits
    const lo = this.nextUint32() >>> 6; // 26 bits
    return (hi * 67108864 + lo) / 9007199254740992;
  }

  /** An independent copy in the same state: what this generator draws next, drawn without advancing it. */
  clone(): Generator {
    const copy = Object.create(Generator.prototype) as Generator;
    copy.s0 = this.s0;
    copy.s1 = this.s1;
    copy.s2 = this.s2;
    copy.s3 = this.s3;
    copy.spareNormal = this.spareNormal;
    return copy;
  }

  /** Standard normal via Box–Muller (pairs cached). */
  normal(): number {
    if (this.spareNormal !== null) {
      const v = this.spareNormal;
      this.spareNormal = null;
      return v;
    }
    const u = 1 - this.random(); // (0, 1]: log stays finite
    const v = this.random();
    const r = Math.sqrt(-2 * Math.log(u));
    this.spareNormal = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  }

  /** Exp(1) draw. */
  exponential(): number {
    return -Math.log(1 - this.random());
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

/** The generator for choice `index` of a request seeded with `seed`: vLLM seeds choice i with seed + i. */
export function choiceGenerator(seed: number | bigint, index: number): Generator {
  return new Generator(BigInt(seed) + BigInt(index));
}
