/**
 * The one automaton every structured-output kind compiles to: a set of rules, each a byte-level
 * finite-state machine whose edges consume a byte range or call another rule (a recursive transition
 * network, i.e. a pushdown automaton over bytes). A regex or a choice list is one rule without calls; JSON
 * Schema uses calls for nesting, $ref recursion and shared sub-schemas.
 *
 * Build time: rules are written as epsilon-NFAs with {@link Frag} combinators, then each rule is made
 * deterministic over bytes and calls (subset construction), non-productive rules and dead states are
 * pruned — so every reachable parser state can still be completed, which is what lets a random walk over
 * allowed tokens always end in a full match — and left recursion is rejected (it would make the
 * epsilon-closure infinite).
 *
 * Run time ({@link GrammarRuntime}): a parser state is the set of configurations (node, call stack) that
 * are ready to consume a byte, closed under calls and returns, plus an `accept` flag. States are interned
 * and their byte transitions memoised, so decoding walks a lazily built DFA of configuration sets: after
 * the first visit a step is one array lookup, and per-state token masks can be cached on the state.
 */

export class ConstraintCompileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConstraintCompileError';
  }
}

/** A fragment writes its NFA from node `from` and returns its end node. It must never add edges into `from`. */
export type Frag = (b: RuleBuilder, from: number) => number;

export class RuleBuilder {
  /** Per node: flat [lo, hi, to, …]. */
  readonly bytes: number[][] = [];
  /** Per node: flat [rule, to, …]. */
  readonly calls: number[][] = [];
  readonly eps: number[][] = [];

  constructor(
    private readonly limits: { nodes: number; total: { n: number } },
    private readonly owner: GrammarBuilder,
  ) {}

  /** A rule of the grammar being built, created once per key (shared character classes). */
  sharedRule(key: string, body: Frag): number {
    return this.owner.sharedRule(key, body);
  }

  node(): number {
    if (++this.limits.total.n > this.limits.nodes)
      throw new ConstraintCompileError(`the constraint is too large (more than ${this.limits.nodes} automaton nodes)`);
    this.bytes.push([]);
    this.calls.push([]);
    this.eps.push([]);
    return this.bytes.length - 1;
  }

  byte(from: number, lo: number, hi: number, to: number): void {
    this.bytes[from].push(lo, hi, to);
  }

  call(from: number, rule: number, to: number): void {
    this.calls[from].push(rule, to);
  }

  epsilon(from: number, to: number): void {
    if (from !== to) this.eps[from].push(to);
  }
}

// ---- Fragment combinators -------------------------------------------------------------------------------

const enc = new TextEncoder();

export const empty: Frag = (_b, from) => from;

/** Matches nothing: the end node is unreachable, so a rule made only of this is pruned as non-productive. */
export const never: Frag = (b) => b.node();

export function lit(text: string | ArrayLike<number>): Frag {
  const bytes = typeof text === 'string' ? enc.encode(text) : text;
  return (b, from) => {
    let cur = from;
    for (let i = 0; i < bytes.length; i++) {
      const n = b.node();
      b.byte(cur, bytes[i], bytes[i], n);
      cur = n;
    }
    return cur;
  };
}

export function byteRange(lo: number, hi: number): Frag {
  return (b, from) => {
    const n = b.node();
    b.byte(from, lo, hi, n);
    return n;
  };
}

export function seq(...parts: Frag[]): Frag {
  return (b, from) => parts.reduce((cur, f) => f(b, cur), from);
}

export function alt(...parts: Frag[]): Frag {
  return (b, from) => {
    const end = b.node();
    for (const f of parts) {
      // A fresh start per branch keeps a looping branch from leaking into its siblings.
      const s = b.node();
      b.epsilon(from, s);
      b.epsilon(f(b, s), end);
    }
    return end;
  };
}

export function opt(f: Frag): Frag {
  return alt(f, empty);
}

/** Zero or more. */
export function star(f: Frag): Frag {
  return (b, from) => {
    const head = b.node();
    b.epsilon(from, head);
    const body = b.node();
    b.epsilon(head, body);
    b.epsilon(f(b, body), head);
    return head;
  };
}

/**
 * Between min and max copies (max = Infinity for unbounded). Built iteratively as a chain in which copy i
 * may exit to the end once i ≥ min, so each count has one path and long counts cost no recursion.
 */
export function repeat(f: Frag, min: number, max: number): Frag {
  return (b, from) => {
    let cur = from;
    for (let i = 0; i < min; i++) cur = f(b, cur);
    if (max === Infinity) return star(f)(b, cur);
    const end = b.node();
    b.epsilon(cur, end);
    for (let i = min; i < max; i++) {
      cur = f(b, cur);
      b.epsilon(cur, end);
    }
    return end;
  };
}

export function call(rule: number): Frag {
  return (b, from) => {
    const n = b.node();
    b.call(from, rule, n);
    return n;
  };
}

// ---- Grammar building and compilation -------------------------------------------------------------------

interface RuleDef {
  name: string;
  builder: RuleBuilder | null;
  end: number;
}

export interface GrammarLimits {
  /** NFA nodes over all rules while building. */
  maxNfaNodes?: number;
  /** Deterministic nodes over all rules. */
  maxNodes?: number;
}

export class GrammarBuilder {
  private readonly rules: RuleDef[] = [];
  private readonly limits: { nodes: number; total: { n: number } };
  private readonly maxNodes: number;
  private readonly shared = new Map<string, number>();

  constructor(limits: GrammarLimits = {}) {
    this.limits = { nodes: limits.maxNfaNodes ?? 400_000, total: { n: 0 } };
    this.maxNodes = limits.maxNodes ?? 200_000;
  }

  /** Reserves a rule id (so that recursive references can be emitted before the body exists). */
  declare(name: string): number {
    this.rules.push({ name, builder: null, end: -1 });
    return this.rules.length - 1;
  }

  define(rule: number, body: Frag): void {
    const def = this.rules[rule];
    if (def.builder) throw new Error(`rule ${def.name} defined twice`);
    const b = new RuleBuilder(this.limits, this);
    def.builder = b;
    const start = b.node();
    def.end = body(b, start);
  }

  rule(name: string, body: Frag): number {
    const id = this.declare(name);
    this.define(id, body);
    return id;
  }

  sharedRule(key: string, body: Frag): number {
    let id = this.shared.get(key);
    if (id === undefined) {
      id = this.declare(key);
      this.shared.set(key, id);
      this.define(id, body);
    }
    return id;
  }

  isDefined(rule: number): boolean {
    return this.rules[rule].builder !== null;
  }

  build(root: number): Grammar {
    const dfas = this.rules.map((r) => {
      if (!r.builder) throw new Error(`rule ${r.name} declared but never defined`);
      return determinize(r.builder, r.end);
    });
    return Grammar.fromRules(
      dfas,
      this.rules.map((r) => r.name),
      root,
      this.maxNodes,
    );
  }
}

/** A rule made deterministic: per state, disjoint sorted byte ranges and at most one edge per called rule. */
interface RuleDfa {
  bytes: number[][]; // flat [lo, hi, to]
  calls: number[][]; // flat [rule, to]
  final: boolean[];
}

function determinize(nfa: RuleBuilder, end: number): RuleDfa {
  const closureOf = (seeds: Iterable<number>): number[] => {
    const seen = new Set<number>();
    const stack = [...seeds];
    while (stack.length) {
      const n = stack.pop() as number;
      if (seen.has(n)) continue;
      seen.add(n);
      for (const m of nfa.eps[n]) if (!seen.has(m)) stack.push(m);
    }
    return [...seen].sort((a, b) => a - b);
  };
  const out: RuleDfa = { bytes: [], calls: [], final: [] };
  const ids = new Map<string, number>();
  const sets: number[][] = [];
  const intern = (set: number[]): number => {
    const key = set.join(',');
    let id = ids.get(key);
    if (id === undefined) {
      id = sets.length;
      ids.set(key, id);
      sets.push(set);
    }
    return id;
  };
  intern(closureOf([0]));
  for (let i = 0; i < sets.length; i++) {
    const set = sets[i];
    out.final[i] = set.includes(end);
    // Bytes: cut 0–255 at every edge boundary; each elementary interval goes to the closure of the
    // edges covering it, and neighbouring intervals with the same target merge into one range.
    const edges: number[] = [];
    for (const n of set) for (const x of nfa.bytes[n]) edges.push(x);
    const ranges: number[] = [];
    if (edges.length) {
      const cuts = new Set<number>();
      for (let k = 0; k < edges.length; k += 3) {
        cuts.add(edges[k]);
        cuts.add(edges[k + 1] + 1);
      }
      const points = [...cuts].sort((a, b) => a - b);
      const memo = new Map<string, number>();
      for (let p = 0; p + 1 < points.length; p++) {
        const lo = points[p];
        const hi = points[p + 1] - 1;
        const tos: number[] = [];
        for (let k = 0; k < edges.length; k += 3) if (edges[k] <= lo && edges[k + 1] >= hi) tos.push(edges[k + 2]);
        if (!tos.length) continue;
        const key = [...new Set(tos)].sort((a, b) => a - b).join(',');
        let to = memo.get(key);
        if (to === undefined) {
          to = intern(closureOf(tos));
          memo.set(key, to);
        }
        if (ranges.length && ranges[ranges.length - 1] === to && ranges[ranges.length - 2] === lo - 1)
          ranges[ranges.length - 2] = hi;
        else ranges.push(lo, hi, to);
      }
    }
    out.bytes[i] = ranges;
    // Calls: one edge per called rule, to the closure of all its targets.
    const byRule = new Map<number, number[]>();
    for (const n of set) {
      const e = nfa.calls[n];
      for (let k = 0; k < e.length; k += 2) {
        const list = byRule.get(e[k]);
        if (list) list.push(e[k + 1]);
        else byRule.set(e[k], [e[k + 1]]);
      }
    }
    const calls: number[] = [];
    for (const [rule, tos] of byRule) calls.push(rule, intern(closureOf(tos)));
    out.calls[i] = calls;
  }
  return out;
}

/**
 * The compiled, immutable grammar: global node ids over all rules. Shareable between requests (runtimes
 * hold all mutable caches).
 */
export class Grammar {
  private constructor(
    /** Rule start node per rule. */
    readonly ruleStart: Int32Array,
    /** Node → rule end flag. */
    readonly final: Uint8Array,
    /** Per node: flat [lo, hi, to] sorted. */
    readonly bytes: Int32Array[],
    /** Per node: flat [rule, returnNode]. */
    readonly calls: Int32Array[],
    /** Per node: the 256-bit set of bytes it consumes directly (8 words). */
    readonly byteSets: Uint32Array,
    readonly root: number,
    readonly ruleNames: string[],
  ) {}

  get nodeCount(): number {
    return this.final.length;
  }

  static fromRules(dfas: RuleDfa[], names: string[], root: number, maxNodes: number): Grammar {
    const R = dfas.length;
    // Productive rules (fixpoint): some path from the start reaches a final state through bytes and calls
    // of productive rules.
    const productive = new Uint8Array(R);
    const coReach: Uint8Array[] = dfas.map((d) => new Uint8Array(d.final.length));
    for (let changed = true; changed;) {
      changed = false;
      for (let r = 0; r < R; r++) {
        const d = dfas[r];
        const live = coReach[r];
        for (let grew = true; grew;) {
          grew = false;
          for (let s = 0; s < d.final.length; s++) {
            if (live[s]) continue;
            let ok = d.final[s];
            const b = d.bytes[s];
            for (let k = 0; !ok && k < b.length; k += 3) ok = live[b[k + 2]] === 1;
            const c = d.calls[s];
            for (let k = 0; !ok && k < c.length; k += 2) ok = productive[c[k]] === 1 && live[c[k + 1]] === 1;
            if (ok) {
              live[s] = 1;
              grew = true;
            }
          }
        }
        if (!productive[r] && live[0]) {
          productive[r] = 1;
          changed = true;
        }
      }
    }
    if (!productive[root]) throw new ConstraintCompileError('no output can satisfy the constraint');

    // Reachable states through live edges only, from the root; calls make their rules reachable.
    const reach: Uint8Array[] = dfas.map((d) => new Uint8Array(d.final.length));
    const ruleSeen = new Uint8Array(R);
    const pending: number[] = [root];
    ruleSeen[root] = 1;
    while (pending.length) {
      const r = pending.pop() as number;
      const d = dfas[r];
      const live = coReach[r];
      const seen = reach[r];
      const stack = [0];
      seen[0] = 1;
      while (stack.length) {
        const s = stack.pop() as number;
        const b = d.bytes[s];
        for (let k = 0; k < b.length; k += 3) {
          const t = b[k + 2];
          if (live[t] && !seen[t]) {
            seen[t] = 1;
            stack.push(t);
          }
        }
        const c = d.calls[s];
        for (let k = 0; k < c.length; k += 2) {
          const rule = c[k];
          const t = c[k + 1];
          if (!productive[rule] || !live[t]) continue;
          if (!ruleSeen[rule]) {
            ruleSeen[rule] = 1;
            pending.push(rule);
          }
          if (!seen[t]) {
            seen[t] = 1;
            stack.push(t);
          }
        }
      }
    }

    // Global numbering of kept states.
    const base: number[] = [];
    const local: Int32Array[] = [];
    let total = 0;
    for (let r = 0; r < R; r++) {
      const map = new Int32Array(dfas[r].final.length).fill(-1);
      base.push(total);
      if (ruleSeen[r]) for (let s = 0; s < map.length; s++) if (reach[r][s]) map[s] = total++;
      local.push(map);
    }
    if (total > maxNodes)
      throw new ConstraintCompileError(`the constraint is too large (${total} automaton states, limit ${maxNodes})`);
    const ruleStart = new Int32Array(R).fill(-1);
    const final = new Uint8Array(total);
    const bytes: Int32Array[] = new Array(total);
    const calls: Int32Array[] = new Array(total);
    const byteSets = new Uint32Array(total * 8);
    for (let r = 0; r < R; r++) {
      if (!ruleSeen[r]) continue;
      ruleStart[r] = local[r][0];
      const d = dfas[r];
      for (let s = 0; s < d.final.length; s++) {
        const g = local[r][s];
        if (g < 0) continue;
        final[g] = d.final[s] ? 1 : 0;
        const b: number[] = [];
        const src = d.bytes[s];
        for (let k = 0; k < src.length; k += 3) {
          const t = local[r][src[k + 2]];
          if (t < 0) continue;
          b.push(src[k], src[k + 1], t);
          for (let c = src[k]; c <= src[k + 1]; c++) byteSets[g * 8 + (c >>> 5)] |= 1 << (c & 31);
        }
        bytes[g] = Int32Array.from(b);
        const c: number[] = [];
        const srcC = d.calls[s];
        for (let k = 0; k < srcC.length; k += 2) {
          const t = local[r][srcC[k + 1]];
          if (t >= 0 && productive[srcC[k]]) c.push(srcC[k], t);
        }
        calls[g] = Int32Array.from(c);
      }
    }
    const g = new Grammar(ruleStart, final, bytes, calls, byteSets, root, names);
    g.checkLeftRecursion();
    return g;
  }

  /**
   * A rule that can call itself (directly or through others) before consuming a byte would make the
   * closure push forever (e.g. `{"$ref": "#"}` or anyOf whose first branch refers back to the schema).
   */
  private checkLeftRecursion(): void {
    const R = this.ruleStart.length;
    // Nullable rules: the start reaches a final node through calls of nullable rules only.
    const nullable = new Uint8Array(R);
    const epsilonReach = (r: number, visit: (node: number) => void): void => {
      const seen = new Set<number>([this.ruleStart[r]]);
      const stack = [this.ruleStart[r]];
      while (stack.length) {
        const n = stack.pop() as number;
        visit(n);
        const c = this.calls[n];
        for (let k = 0; k < c.length; k += 2)
          if (nullable[c[k]] && !seen.has(c[k + 1])) {
            seen.add(c[k + 1]);
            stack.push(c[k + 1]);
          }
      }
    };
    for (let changed = true; changed;) {
      changed = false;
      for (let r = 0; r < R; r++) {
        if (nullable[r] || this.ruleStart[r] < 0) continue;
        let hit = false;
        epsilonReach(r, (n) => (hit ||= this.final[n] === 1));
        if (hit) {
          nullable[r] = 1;
          changed = true;
        }
      }
    }
    const leftCalls: number[][] = [];
    for (let r = 0; r < R; r++) {
      const set = new Set<number>();
      if (this.ruleStart[r] >= 0)
        epsilonReach(r, (n) => {
          const c = this.calls[n];
          for (let k = 0; k < c.length; k += 2) set.add(c[k]);
        });
      leftCalls.push([...set]);
    }
    const color = new Uint8Array(R); // 0 new, 1 on stack, 2 done
    const dfs = (r: number): void => {
      color[r] = 1;
      for (const s of leftCalls[r]) {
        if (color[s] === 1)
          throw new ConstraintCompileError(
            `recursion without consuming input (rule ${this.ruleNames[s]} can reach itself before any character)`,
          );
        if (color[s] === 0) dfs(s);
      }
      color[r] = 2;
    };
    for (let r = 0; r < R; r++) if (color[r] === 0 && this.ruleStart[r] >= 0) dfs(r);
  }
}

// ---- Runtime ------------------------------------------------------------------------------------------

/**
 * One parser position. Immutable and interned per runtime, so equal positions are the same object and
 * everything derived from them (byte transitions, token masks) is computed once.
 */
export class ParserState {
  /** Per byte: the next state, null when the byte is rejected; filled lazily. */
  next: Array<ParserState | null | undefined> | null = null;
  /** Cached token mask (owned by the token layer). */
  tokenMask: Uint32Array | null = null;
  /** Whether a token other than an end token is allowed (valid once tokenMask is set). */
  hasContent = false;

  constructor(
    /** Flat pairs (node, stackId), sorted; only nodes that consume bytes. */
    readonly configs: Int32Array,
    /** The input so far is a complete match. */
    readonly accept: boolean,
    /** Union of the configs' byte sets (8 words): the bytes that may come next. */
    readonly byteMask: Uint32Array,
    /** The terminal state after an end token. */
    readonly ended = false,
  ) {}
}

export class GrammarRuntime {
  readonly initial: ParserState;
  /** The state after an end token was accepted: only end tokens remain possible. */
  readonly ended: ParserState;
  private readonly states = new Map<string, ParserState>();
  // Call stacks are interned as (parent, returnNode) pairs; id 0 is the empty stack.
  private readonly stackParent: number[] = [-1];
  private readonly stackReturn: number[] = [-1];
  private readonly stackIds = new Map<number, number>();

  constructor(readonly grammar: Grammar) {
    const start = this.closure([grammar.ruleStart[grammar.root], 0]);
    if (!start) throw new ConstraintCompileError('no output can satisfy the constraint');
    this.initial = start;
    this.ended = new ParserState(new Int32Array(0), true, new Uint32Array(8), true);
  }

  get stateCount(): number {
    return this.states.size;
  }

  /** The state after one byte, or null if the byte is not allowed here. */
  step(state: ParserState, byte: number): ParserState | null {
    if (!(state.byteMask[byte >>> 5] & (1 << (byte & 31)))) return null;
    let next = state.next;
    if (!next) next = state.next = new Array<ParserState | null | undefined>(256);
    const cached = next[byte];
    if (cached !== undefined) return cached;
    const g = this.grammar;
    const seeds: number[] = [];
    const cfg = state.configs;
    for (let i = 0; i < cfg.length; i += 2) {
      const e = g.bytes[cfg[i]];
      for (let k = 0; k < e.length; k += 3) {
        if (byte < e[k]) break;
        if (byte <= e[k + 1]) {
          seeds.push(e[k + 2], cfg[i + 1]);
          break;
        }
      }
    }
    const result = seeds.length ? this.closure(seeds) : null;
    next[byte] = result;
    return result;
  }

  /** Runs a byte string; null when rejected at some byte. */
  walk(state: ParserState, bytes: ArrayLike<number>): ParserState | null {
    let s: ParserState | null = state;
    for (let i = 0; i < bytes.length && s; i++) s = this.step(s, bytes[i]);
    return s;
  }

  private pushStack(parent: number, ret: number): number {
    const key = parent * this.grammar.nodeCount + ret;
    let id = this.stackIds.get(key);
    if (id === undefined) {
      id = this.stackParent.length;
      this.stackParent.push(parent);
      this.stackReturn.push(ret);
      this.stackIds.set(key, id);
    }
    return id;
  }

  /** Expands calls and returns from the seed configurations; interns the resulting state. */
  private closure(seeds: number[]): ParserState | null {
    const g = this.grammar;
    const N = g.nodeCount;
    const seen = new Set<number>();
    const work = seeds.slice();
    const kept: number[] = [];
    let accept = false;
    while (work.length) {
      const stack = work.pop() as number;
      const node = work.pop() as number;
      const key = stack * N + node;
      if (seen.has(key)) continue;
      seen.add(key);
      if (g.bytes[node].length) kept.push(node, stack);
      if (g.final[node]) {
        if (stack === 0) accept = true;
        else work.push(this.stackReturn[stack], this.stackParent[stack]);
      }
      const c = g.calls[node];
      for (let k = 0; k < c.length; k += 2) work.push(g.ruleStart[c[k]], this.pushStack(stack, c[k + 1]));
    }
    if (!kept.length && !accept) return null;
    // Canonical order so that equal sets intern to one state.
    const pairs: Array<[number, number]> = [];
    for (let i = 0; i < kept.length; i += 2) pairs.push([kept[i], kept[i + 1]]);
    pairs.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    const key = (accept ? 'A' : 'R') + pairs.map((p) => `${p[0]}.${p[1]}`).join(',');
    const hit = this.states.get(key);
    if (hit) return hit;
    const configs = new Int32Array(pairs.length * 2);
    const mask = new Uint32Array(8);
    pairs.forEach(([n, s], i) => {
      configs[2 * i] = n;
      configs[2 * i + 1] = s;
      for (let w = 0; w < 8; w++) mask[w] |= g.byteSets[n * 8 + w];
    });
    const state = new ParserState(configs, accept, mask);
    this.states.set(key, state);
    return state;
  }
}
