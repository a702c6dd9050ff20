import { DFA, JS, NFA, Transformers, transform, type CharSet, type Expression, type NoParent } from 'refa';
import { ConstraintCompileError, type Frag, type RuleBuilder } from './grammar';
import { utf8Sequences } from './utf8';

/**
 * Regular expressions → character-level DFAs (via refa: JS regex syntax with the `u` flag, Unicode property
 * escapes, counted repetition, minimisation, intersection), then → byte-level fragments of a grammar rule,
 * either as raw UTF-8 (a `regex` constraint) or as the inside of a JSON string literal (a schema `pattern`,
 * `format` or length bound), where `"`, `\` and control characters must be escaped.
 */

/** refa's DFA, kept as such while regexes are combined (intersection), converted at the end. */
export type CharAutomaton = DFA;

const MAX_CHAR = 0x10ffff;
/** DFA-node ceiling per regex: beyond it the pattern is refused rather than blowing up memory. */
const MAX_DFA_NODES = 10_000;

function fail(reason: string): never {
  throw new ConstraintCompileError(reason);
}

/**
 * Compiles a pattern with full-match semantics (as vLLM's xgrammar backend: the whole output must match).
 * `^` / `$` at the pattern's edges are accepted and mean nothing more. Python-only spellings that clients
 * copy from Pydantic (`(?P<name>…)`, `\A`, `\Z`) are translated; other non-JS syntax is refused.
 */
export function regexToAutomaton(pattern: string): CharAutomaton {
  // Automata are never mutated after construction, so compiled patterns (JSON's number syntax, formats,
  // length bounds, repeated schema patterns) are shared through a small LRU.
  const hit = automatonCache.get(pattern);
  if (hit) {
    automatonCache.delete(pattern);
    automatonCache.set(pattern, hit);
    return hit;
  }
  const a = compileRegex(pattern);
  automatonCache.set(pattern, a);
  if (automatonCache.size > 256) automatonCache.delete(automatonCache.keys().next().value as string);
  return a;
}

const automatonCache = new Map<string, CharAutomaton>();

function compileRegex(pattern: string): CharAutomaton {
  const source = pattern
    .replace(/\(\?P</g, '(?<')
    .replace(/\\A/g, '^')
    .replace(/\\Z/g, '$');
  let parser: JS.Parser;
  try {
    parser = JS.Parser.fromLiteral({ source, flags: 'u' });
  } catch (e) {
    // Without `u`, JS accepts identity escapes such as `\-` or `\_` that Python allows too.
    try {
      parser = JS.Parser.fromLiteral({ source, flags: '' });
    } catch {
      fail(errorText(e));
    }
  }
  // Only ^ and $ (and \A, \Z) are supported as assertions: at the pattern's edges they always hold under
  // full-match semantics and are dropped; elsewhere they make the NFA construction fail. Lookarounds and
  // \b / \B are refused outright, because dropping them at the edges would accept strings the pattern
  // does not match.
  const unsupported = findAssertion(parser.ast.pattern);
  if (unsupported) fail(`unsupported assertion ${unsupported} (only ^ and $ at the pattern's ends are supported)`);
  try {
    const parsed = parser.parse({ backreferences: 'throw', assertions: 'parse', maxNodes: MAX_DFA_NODES });
    let expression: NoParent<Expression> = parsed.expression;
    expression = transform(Transformers.simplify({ ignoreAmbiguity: true, ignoreOrder: true }), expression);
    expression = transform(Transformers.patternEdgeAssertions({ inline: false, remove: true }), expression);
    const nfa = NFA.fromRegex(
      expression,
      { maxCharacter: parsed.maxCharacter },
      { assertions: 'throw' },
      new NFA.LimitedNodeFactory(MAX_DFA_NODES),
    );
    return finish(DFA.fromFA(nfa, new DFA.LimitedNodeFactory(MAX_DFA_NODES)));
  } catch (e) {
    if (e instanceof ConstraintCompileError) throw e;
    fail(errorText(e));
  }
}

/** The raw text of the first lookaround or word-boundary assertion in a regexpp AST, if any. */
function findAssertion(node: unknown): string | null {
  if (typeof node !== 'object' || node === null) return null;
  if (Array.isArray(node)) {
    for (const x of node) {
      const hit = findAssertion(x);
      if (hit) return hit;
    }
    return null;
  }
  const n = node as { type?: unknown; kind?: unknown; raw?: unknown };
  if (n.type === 'Assertion' && n.kind !== 'start' && n.kind !== 'end') return String(n.raw);
  for (const key of ['alternatives', 'elements', 'element']) {
    const hit = findAssertion((node as Record<string, unknown>)[key]);
    if (hit) return hit;
  }
  return null;
}

function errorText(e: unknown): string {
  const name = e instanceof Error ? e.name : '';
  const msg = e instanceof Error ? e.message : String(e);
  if (name === 'TooManyNodesError' || /not allowed to create more than/.test(msg))
    return 'the pattern is too complex (automaton too large)';
  if (/assertion/i.test(msg)) return `^ and $ are only supported at the pattern's ends: ${msg}`;
  if (/backreference/i.test(msg)) return `backreferences are not supported: ${msg}`;
  return msg;
}

function finish(dfa: DFA): DFA {
  dfa.minimize();
  return dfa;
}

/** Both languages (refa product construction). */
export function intersect(a: CharAutomaton, b: CharAutomaton): CharAutomaton {
  try {
    return finish(DFA.fromIntersection(a, b, new DFA.LimitedNodeFactory(MAX_DFA_NODES)));
  } catch (e) {
    fail(errorText(e));
  }
}

/** Any string of `min` to `max` characters (code points). */
export function lengthAutomaton(min: number, max: number): CharAutomaton {
  return regexToAutomaton(max === Infinity ? `[^]{${min},}` : `[^]{${min},${max}}`);
}

/** Every string except the given ones (keys of additional properties must differ from declared names). */
export function allStringsExcept(words: readonly string[]): CharAutomaton {
  const dfa = DFA.fromWords(
    words.map((w) => Array.from(w, (ch) => ch.codePointAt(0) as number)),
    { maxCharacter: MAX_CHAR },
    new DFA.LimitedNodeFactory(MAX_DFA_NODES),
  );
  dfa.complement();
  return finish(dfa);
}

export function isEmptyLanguage(a: CharAutomaton): boolean {
  return a.isEmpty;
}

/** The character ranges from one state to one target (refa lists ranges one by one: grouped here). */
interface CharEdge {
  ranges: Array<[number, number]>;
  to: number;
}

/** Plain form: states 0..n−1, state 0 initial. */
interface CharDfa {
  edges: CharEdge[][];
  final: boolean[];
}

function toCharDfa(a: CharAutomaton): CharDfa {
  const index = new Map<DFA.ReadonlyNode, number>();
  const order: DFA.ReadonlyNode[] = [a.initial];
  index.set(a.initial, 0);
  for (let i = 0; i < order.length; i++) {
    for (const [, to] of order[i].out) {
      if (!index.has(to)) {
        index.set(to, order.length);
        order.push(to);
      }
    }
  }
  const edges: CharEdge[][] = order.map((node) => {
    const byTarget = new Map<number, Array<[number, number]>>();
    for (const [range, to] of node.out) {
      const t = index.get(to) as number;
      const list = byTarget.get(t);
      if (list) list.push([range.min, range.max]);
      else byTarget.set(t, [[range.min, range.max]]);
    }
    return [...byTarget].map(([to, ranges]) => ({ ranges, to }));
  });
  return { edges, final: order.map((n) => a.finals.has(n as DFA.Node)) };
}

export type StringEncoding = 'raw' | 'json';

const HEX = '0123456789abcdef';
const SHORT_ESCAPES = new Map<number, string>([
  [0x08, 'b'],
  [0x09, 't'],
  [0x0a, 'n'],
  [0x0c, 'f'],
  [0x0d, 'r'],
]);

/**
 * Writes "one character of this set" between two nodes of a rule under construction. `json` writes each
 * character the way it may appear inside a JSON string literal: raw UTF-8 for ordinary characters; `\"`,
 * `\\` for the two that must be escaped; `\b \f \n \r \t` or `\u00XX` for control characters (never raw,
 * whatever the length bounds say); `\/` besides `/`; and `\uXXXX` (any BMP non-surrogate) when the set
 * holds every BMP character. Every encoding of a character leads to the same node.
 */
class CharWriter {
  // Continuation-byte tails are shared per destination: tails[dst][k − 1] reads k bytes 80–BF, then dst.
  // Most UTF-8 sequences end in such a tail, so this keeps the NFA (and its determinisation) small.
  private readonly tails = new Map<number, number[]>();

  constructor(
    private readonly b: RuleBuilder,
    private readonly encoding: StringEncoding,
  ) {}

  write(src: number, ranges: ReadonlyArray<readonly [number, number]>, dst: number): void {
    for (const [lo, hi] of ranges) this.range(src, lo, hi, dst);
  }

  private path(src: number, seq: ReadonlyArray<readonly [number, number]>, dst: number): void {
    let cur = src;
    for (let i = 0; i < seq.length; i++) {
      const next = i === seq.length - 1 ? dst : this.b.node();
      this.b.byte(cur, seq[i][0], seq[i][1], next);
      cur = next;
    }
  }

  private tail(dst: number, k: number): number {
    let list = this.tails.get(dst);
    if (!list) this.tails.set(dst, (list = []));
    while (list.length < k) {
      const n = this.b.node();
      this.b.byte(n, 0x80, 0xbf, list.length ? list[list.length - 1] : dst);
      list.push(n);
    }
    return list[k - 1];
  }

  private utf8(src: number, lo: number, hi: number, dst: number): void {
    for (const s of utf8Sequences(lo, hi)) {
      let k = 0;
      while (k < s.length - 1 && s[s.length - 1 - k][0] === 0x80 && s[s.length - 1 - k][1] === 0xbf) k++;
      this.path(src, s.slice(0, s.length - k), k ? this.tail(dst, k) : dst);
    }
  }

  private range(src: number, lo: number, hi: number, dst: number): void {
    if (this.encoding === 'raw') {
      this.utf8(src, lo, hi, dst);
      return;
    }
    const b = this.b;
    const ascii = (text: string): Array<[number, number]> =>
      Array.from(text, (c) => [c.charCodeAt(0), c.charCodeAt(0)]);
    const allBmp = lo === 0 && hi >= 0xffff;
    // Ordinary characters: everything but controls, `"` and `\`.
    const cuts: Array<[number, number]> = [
      [0x20, 0x21],
      [0x23, 0x5b],
      [0x5d, MAX_CHAR],
    ];
    for (const [x, y] of cuts)
      if (Math.max(lo, x) <= Math.min(hi, y)) this.utf8(src, Math.max(lo, x), Math.min(hi, y), dst);
    if (lo <= 0x22 && hi >= 0x22) this.path(src, ascii('\\"'), dst);
    if (lo <= 0x5c && hi >= 0x5c) this.path(src, ascii('\\\\'), dst);
    if (lo <= 0x2f && hi >= 0x2f) this.path(src, ascii('\\/'), dst);
    for (let c = lo; c <= Math.min(hi, 0x1f); c++) {
      const short = SHORT_ESCAPES.get(c);
      if (short) this.path(src, ascii('\\' + short), dst);
      if (allBmp) continue; // covered by the generic \uXXXX below
      const l = HEX[c & 15];
      const last: [number, number] = [l.charCodeAt(0), l.charCodeAt(0)];
      this.path(src, [...ascii('\\u00' + HEX[c >> 4]), last], dst);
      if (l >= 'a') this.path(src, [...ascii('\\u00' + HEX[c >> 4]), [last[0] - 32, last[0] - 32]], dst);
    }
    if (allBmp) {
      // \uXXXX for any non-surrogate BMP value (a D first digit only with 0–7 next), as a small graph.
      const hex = (x: number, y: number): void => {
        b.byte(x, 0x30, 0x39, y);
        b.byte(x, 0x41, 0x46, y);
        b.byte(x, 0x61, 0x66, y);
      };
      const [p, q, r1, r2, r3, r4] = [b.node(), b.node(), b.node(), b.node(), b.node(), b.node()];
      b.byte(src, 0x5c, 0x5c, p);
      b.byte(p, 0x75, 0x75, q);
      for (const [x, y] of [
        [0x30, 0x39],
        [0x41, 0x43],
        [0x45, 0x46],
        [0x61, 0x63],
        [0x65, 0x66],
      ])
        b.byte(q, x, y, r1);
      b.byte(q, 0x44, 0x44, r2);
      b.byte(q, 0x64, 0x64, r2);
      hex(r1, r3);
      b.byte(r2, 0x30, 0x37, r3);
      hex(r3, r4);
      hex(r4, dst);
    }
  }
}

/** Sets whose bytes take more than this many UTF-8 sequences become a shared rule, called per use. */
const INLINE_SEQUENCE_LIMIT = 8;

function sequenceCount(ranges: ReadonlyArray<readonly [number, number]>): number {
  let n = 0;
  for (const [lo, hi] of ranges) {
    n += utf8Sequences(lo, hi).length;
    if (n > INLINE_SEQUENCE_LIMIT) break;
  }
  return n;
}

/**
 * The automaton as a grammar fragment over bytes (see {@link CharWriter} for the encodings). Large
 * character sets (`.`, `\p{L}`, "any character" in JSON strings) are written once as a shared rule and
 * called from every state that uses them, so `\p{L}{1,200}` costs 200 call edges rather than 200 copies
 * of a thousand UTF-8 paths; small sets are inlined (no call overhead at run time).
 */
export function automatonFrag(a: CharAutomaton, encoding: StringEncoding): Frag {
  const dfa = toCharDfa(a);
  return (b, from) => {
    const nodes = dfa.final.map(() => b.node());
    b.epsilon(from, nodes[0]);
    const end = b.node();
    const writer = new CharWriter(b, encoding);
    dfa.edges.forEach((edges, s) => {
      if (dfa.final[s]) b.epsilon(nodes[s], end);
      for (const { ranges, to } of edges) {
        if (sequenceCount(ranges) <= INLINE_SEQUENCE_LIMIT) {
          writer.write(nodes[s], ranges, nodes[to]);
          continue;
        }
        const key = `class:${encoding}:${ranges.map(([lo, hi]) => `${lo}-${hi}`).join(',')}`;
        const rule = b.sharedRule(key, (rb, start) => {
          const stop = rb.node();
          new CharWriter(rb, encoding).write(start, ranges, stop);
          return stop;
        });
        b.call(nodes[s], rule, nodes[to]);
      }
    });
    return end;
  };
}

/** Convenience: a full-match regex as a raw byte fragment. */
export function regexFrag(pattern: string): Frag {
  return automatonFrag(regexToAutomaton(pattern), 'raw');
}

// Exported for tests.
export type { CharSet };
