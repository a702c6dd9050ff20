/**
 * Numeric bounds as regular expressions over JSON number text, so that `minimum`/`maximum` (and their
 * exclusive forms) are enforced digit by digit instead of checked after the fact. Integers: exact for any
 * magnitude (BigInt). Decimals: `I(.F)?` without exponent, compared as digit strings — exact up to
 * double rounding of 17+ significant digits.
 */

export const JSON_NUMBER = '-?(?:0|[1-9][0-9]*)(?:\\.[0-9]+)?(?:[eE][+-]?[0-9]+)?';
export const JSON_INTEGER = '-?(?:0|[1-9][0-9]*)';
const NAT = '(?:0|[1-9][0-9]*)';
const FRAC_OPT = '(?:\\.[0-9]+)?';

const alt = (parts: string[]): string => (parts.length === 1 ? parts[0] : `(?:${parts.join('|')})`);

/** Equal-length digit strings a ≤ b (leading zeros allowed): every digit string between them. */
function digitRange(a: string, b: string): string {
  if (a === b) return a;
  if (/^0*$/.test(a) && /^9*$/.test(b)) return `[0-9]{${a.length}}`;
  if (a.length === 1) return `[${a}-${b}]`;
  const a0 = +a[0];
  const b0 = +b[0];
  const ar = a.slice(1);
  const br = b.slice(1);
  if (a0 === b0) return `${a0}${alt([digitRange(ar, br)])}`;
  const parts = [`${a0}${alt([digitRange(ar, '9'.repeat(ar.length))])}`];
  if (a0 + 1 <= b0 - 1) parts.push(`[${a0 + 1}-${b0 - 1}][0-9]{${ar.length}}`);
  parts.push(`${b0}${alt([digitRange('0'.repeat(br.length), br)])}`);
  return alt(parts);
}

/** Natural numbers in [a, b] (b = null: unbounded), canonical digits. Null when empty. */
export function naturalRange(a: bigint, b: bigint | null): string | null {
  if (a < 0n) a = 0n;
  if (b !== null && a > b) return null;
  const parts: string[] = [];
  const da = a.toString().length;
  const db = b === null ? da : b.toString().length;
  for (let d = da; d <= db; d++) {
    const lo = d === 1 ? 0n : 10n ** BigInt(d - 1);
    const hi = 10n ** BigInt(d) - 1n;
    const x = a > lo ? a : lo;
    const y = b !== null && b < hi ? b : hi;
    if (x <= y) parts.push(digitRange(x.toString(), y.toString()));
  }
  if (b === null) parts.push(`[1-9][0-9]{${da},}`);
  return parts.length ? alt(parts) : null;
}

/** Integers in [lo, hi] (null = unbounded) as JSON integer text. Null when empty. */
export function integerRange(lo: bigint | null, hi: bigint | null): string | null {
  if (lo !== null && hi !== null && lo > hi) return null;
  const parts: string[] = [];
  if (hi === null || hi >= 0n) {
    const p = naturalRange(lo !== null && lo > 0n ? lo : 0n, hi);
    if (p) parts.push(p);
  }
  if (lo === null || lo < 0n) {
    // Negative values: magnitudes in [max(1, −hi), −lo].
    const minMag = hi !== null && hi < 0n ? -hi : 1n;
    const p = naturalRange(minMag, lo === null ? null : -lo);
    if (p) parts.push(`-${p}`);
  }
  return parts.length ? alt(parts) : null;
}

/** Plain decimal digits of a finite number: integer part and fraction without trailing zeros. */
export function decimalParts(n: number): { int: bigint; frac: string } {
  const abs = Math.abs(n);
  let text = String(abs);
  const m = /^(\d+)(?:\.(\d+))?e([+-]\d+)$/i.exec(text);
  if (m) {
    // Exponent form (≥ 1e21 or < 1e-6): shift the point in the shortest round-trip digits, so that the
    // bound reads as the client wrote it (toFixed would give the binary value's long expansion).
    const digits = m[1] + (m[2] ?? '');
    const point = m[1].length + Number(m[3]);
    text =
      point <= 0
        ? '0.' + '0'.repeat(-point) + digits
        : point >= digits.length
          ? digits + '0'.repeat(point - digits.length)
          : digits.slice(0, point) + '.' + digits.slice(point);
  }
  const [i, f = ''] = text.split('.');
  return { int: BigInt(i), frac: f.replace(/0+$/, '') };
}

function fracGeq(fa: string, strict: boolean): string | null {
  if (fa === '') return strict ? '\\.[0-9]*[1-9][0-9]*' : FRAC_OPT;
  const parts: string[] = [];
  for (let k = 0; k < fa.length; k++) {
    const d = +fa[k];
    if (d < 9) parts.push(`\\.${fa.slice(0, k)}[${d + 1}-9][0-9]*`);
  }
  parts.push(strict ? `\\.${fa}[0-9]*[1-9][0-9]*` : `\\.${fa}[0-9]*`);
  return alt(parts);
}

function fracLeq(fb: string, strict: boolean): string | null {
  if (fb === '') return strict ? null : '(?:\\.0+)?';
  const parts: string[] = ['']; // no fraction: B < B.fb since fb is non-zero
  for (let k = 0; k < fb.length; k++) {
    const d = +fb[k];
    if (d > 0) parts.push(`\\.${fb.slice(0, k)}[0-${d - 1}][0-9]*`);
    if (k >= 1) parts.push(`\\.${fb.slice(0, k)}`);
  }
  if (!strict) parts.push(`\\.${fb}0*`);
  return `(?:${parts.join('|')})`;
}

/** Non-negative decimals ≥ (or >) the magnitude. */
function magnitudeGeq(m: { int: bigint; frac: string }, strict: boolean): string | null {
  const parts: string[] = [];
  const above = naturalRange(m.int + 1n, null);
  if (above) parts.push(above + FRAC_OPT);
  const f = fracGeq(m.frac, strict);
  if (f !== null) parts.push(`${m.int}${f}`);
  return parts.length ? alt(parts) : null;
}

/** Non-negative decimals ≤ (or <) the magnitude. */
function magnitudeLeq(m: { int: bigint; frac: string }, strict: boolean): string | null {
  const parts: string[] = [];
  if (m.int >= 1n) {
    const below = naturalRange(0n, m.int - 1n);
    if (below) parts.push(below + FRAC_OPT);
  }
  const f = fracLeq(m.frac, strict);
  if (f !== null) parts.push(`${m.int}${f}`);
  return parts.length ? alt(parts) : null;
}

/** Decimal numbers (no exponent) with x ≥ lo (x > lo when strict). */
export function decimalAtLeast(lo: number, strict: boolean): string {
  const m = decimalParts(lo);
  if (lo > 0 || (lo === 0 && strict)) return magnitudeGeq(m, strict) ?? '[]';
  if (lo === 0) return NAT + FRAC_OPT;
  // Negative bound: every non-negative number, and negatives whose magnitude is ≤ |lo|.
  const neg = magnitudeLeq(m, strict);
  return alt([NAT + FRAC_OPT, ...(neg ? [`-${neg}`] : [])]);
}

/** Decimal numbers (no exponent) with x ≤ hi (x < hi when strict). */
export function decimalAtMost(hi: number, strict: boolean): string {
  const m = decimalParts(hi);
  if (hi < 0 || (hi === 0 && strict)) {
    const mag = magnitudeGeq(m, strict);
    return mag ? `-${mag}` : '[]';
  }
  const pos = magnitudeLeq(m, strict);
  return alt([...(pos ? [pos] : []), `-${NAT}${FRAC_OPT}`]);
}
