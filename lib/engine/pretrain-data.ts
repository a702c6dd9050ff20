import type { ChatMessage } from './chat-template';
import { Generator } from './random';

/**
 * Synthetic chat data for pretraining `tuneboard/tiny-chat` (scripts/engine-pretrain.ts). Pure and seeded:
 * no files, no network, the same seed gives the same examples on every machine. Each family is something a
 * 2-layer byte-level model can plausibly learn *as a rule* (so it can be tested on prompts it never saw):
 * 2-digit addition, reversing and spelling words, a few small fact tables asked in varied phrasings, and a
 * greeting. Every family has a held-out split that no training example ever contains:
 *
 * - arithmetic: unordered number pairs {a, b} picked by a fixed hash (≈ 6 % of pairs);
 * - reverse / spell: every sixth word of WORDS (training uses the other words plus random letter strings,
 *   never equal to a held-out word);
 * - capital / colour / opposite / greeting: (fact, phrasing) combinations — each fact is trained in the
 *   other phrasings and each phrasing with other facts, so held-out prompts test recombination, not
 *   knowledge the model could not have.
 */

export const PRETRAIN_FAMILIES = [
  'arithmetic',
  'reverse',
  'spell',
  'capital',
  'colour',
  'opposite',
  'greeting',
] as const;
export type PretrainFamily = (typeof PRETRAIN_FAMILIES)[number];

export interface QaExample {
  family: PretrainFamily;
  question: string;
  answer: string;
}

/**
 * Share of each family in the training stream. The rule-learning families (arithmetic, reverse, spell) get
 * most of the budget: the fact tables hold a few dozen items and are memorised within a few hundred steps.
 */
export const DEFAULT_FAMILY_WEIGHTS: Readonly<Record<PretrainFamily, number>> = {
  arithmetic: 0.34,
  reverse: 0.24,
  spell: 0.14,
  capital: 0.07,
  colour: 0.06,
  opposite: 0.08,
  greeting: 0.07,
};

// ---------------------------------------------------------------------------------------------------------
// Tables

/** Common lowercase words of 3–7 letters (reverse, spell). Order matters: the held-out split is by index. */
export const WORDS: readonly string[] = (
  'apple table chair house water light green river stone bread plant music dance smile cloud ' +
  'horse mouse tiger zebra camel sheep goat duck frog fish bird snake eagle whale shark ' +
  'paper pencil book page letter word story poem song voice sound noise quiet happy sunny ' +
  'candle window door floor roof wall garden forest desert island ocean lake hill valley ' +
  'winter summer spring autumn morning night evening today money price market store shop ' +
  'bottle glass plate spoon fork knife cup bowl kettle oven sugar salt pepper honey butter ' +
  'cheese milk coffee tea juice lemon orange banana cherry grape melon peach pear plum ' +
  'friend family mother father sister brother child baby people person woman man king queen ' +
  'prince castle tower bridge road street city town village farm field grass flower tree ' +
  'leaf root seed branch wood metal iron gold silver copper rock sand dust fire smoke ' +
  'rain snow storm wind thunder star moon planet earth space rocket robot engine wheel ' +
  'train plane boat ship truck car bike ticket travel journey map north south east west ' +
  'left right under over inside outside above below behind front back side corner ' +
  'circle square shape line point number count zero seven eleven dozen hundred ' +
  'black white red blue yellow purple brown pink silent loud soft hard warm cold ' +
  'quick slow early late young old new small large big tall short wide narrow deep ' +
  'jump run walk swim climb throw catch carry build paint write read sing play ' +
  'sleep dream think learn teach speak listen watch open close start finish begin ' +
  'heart brain hand foot finger head face nose mouth ear eye hair skin bone blood ' +
  'doctor nurse farmer pilot driver singer writer baker hunter sailor soldier ' +
  'school lesson class exam answer question problem idea plan reason result ' +
  'button pocket jacket shirt dress shoe boot hat scarf glove ring watch lamp ' +
  'basket blanket pillow mirror clock phone radio camera screen mouse cable ' +
  'puzzle riddle secret magic wizard dragon giant ghost angel hero pirate ' +
  'circus party picnic holiday gift toy ball kite drum flute piano guitar violin'
)
  .split(/\s+/)
  .filter((w, i, all) => w.length >= 3 && w.length <= 7 && all.indexOf(w) === i);

/** Capitals: short names only, so answers stay a few tokens. */
export const CAPITALS: ReadonlyArray<readonly [string, string]> = [
  ['France', 'Paris'],
  ['Japan', 'Tokyo'],
  ['Italy', 'Rome'],
  ['Spain', 'Madrid'],
  ['Germany', 'Berlin'],
  ['Egypt', 'Cairo'],
  ['Canada', 'Ottawa'],
  ['Peru', 'Lima'],
  ['Kenya', 'Nairobi'],
  ['Norway', 'Oslo'],
  ['Greece', 'Athens'],
  ['China', 'Beijing'],
  ['Russia', 'Moscow'],
  ['Cuba', 'Havana'],
  ['Ireland', 'Dublin'],
  ['Portugal', 'Lisbon'],
  ['Austria', 'Vienna'],
  ['Poland', 'Warsaw'],
  ['Sweden', 'Stockholm'],
  ['Chile', 'Santiago'],
];

export const COLOURS: ReadonlyArray<readonly [string, string]> = [
  ['the sky', 'blue'],
  ['grass', 'green'],
  ['snow', 'white'],
  ['coal', 'black'],
  ['a banana', 'yellow'],
  ['a tomato', 'red'],
  ['an orange', 'orange'],
  ['a lemon', 'yellow'],
  ['milk', 'white'],
  ['a strawberry', 'red'],
  ['a frog', 'green'],
  ['chocolate', 'brown'],
  ['a crow', 'black'],
  ['the sea', 'blue'],
  ['a plum', 'purple'],
  ['a flamingo', 'pink'],
];

/** Both directions are facts of their own ("hot" → "cold" and "cold" → "hot"). */
export const OPPOSITES: ReadonlyArray<readonly [string, string]> = [
  ['hot', 'cold'],
  ['big', 'small'],
  ['up', 'down'],
  ['fast', 'slow'],
  ['happy', 'sad'],
  ['light', 'dark'],
  ['open', 'closed'],
  ['early', 'late'],
  ['high', 'low'],
  ['full', 'empty'],
  ['wet', 'dry'],
  ['left', 'right'],
  ['day', 'night'],
  ['strong', 'weak'],
  ['rich', 'poor'],
  ['loud', 'quiet'],
];

const ARITHMETIC_PHRASINGS: ReadonlyArray<(a: number, b: number) => string> = [
  (a, b) => `What is ${a} + ${b}?`,
  (a, b) => `What is ${a} plus ${b}?`,
  (a, b) => `${a} + ${b} = ?`,
  (a, b) => `Compute ${a} + ${b}.`,
  (a, b) => `Add ${a} and ${b}.`,
  (a, b) => `How much is ${a} plus ${b}?`,
];

const REVERSE_PHRASINGS: ReadonlyArray<(w: string) => string> = [
  (w) => `Reverse the word '${w}'.`,
  (w) => `What is '${w}' backwards?`,
  (w) => `Write ${w} in reverse.`,
  (w) => `Reverse '${w}'.`,
  (w) => `Spell '${w}' backwards.`,
];

const SPELL_PHRASINGS: ReadonlyArray<(w: string) => string> = [
  (w) => `Spell '${w}'.`,
  (w) => `How do you spell ${w}?`,
  (w) => `Spell the word '${w}'.`,
  (w) => `Can you spell '${w}'?`,
];

const CAPITAL_PHRASINGS: ReadonlyArray<(x: string) => string> = [
  (x) => `What is the capital of ${x}?`,
  (x) => `What's the capital of ${x}?`,
  (x) => `Name the capital of ${x}.`,
  (x) => `Which city is the capital of ${x}?`,
  (x) => `Capital of ${x}?`,
];

const COLOUR_PHRASINGS: ReadonlyArray<(x: string) => string> = [
  (x) => `What colour is ${x}?`,
  (x) => `What color is ${x}?`,
  (x) => `Which colour is ${x}?`,
  (x) => `Tell me the colour of ${x}.`,
];

const OPPOSITE_PHRASINGS: ReadonlyArray<(x: string) => string> = [
  (x) => `What is the opposite of ${x}?`,
  (x) => `What's the opposite of '${x}'?`,
  (x) => `Give the opposite of ${x}.`,
  (x) => `Opposite of ${x}?`,
];

const GREETING_OPENERS = ['Hello', 'Hi', 'Hey', 'Good morning', 'Good evening', 'Greetings', 'Hi there', 'Hello there'];
const GREETING_TAILS = ['', '!', '.', ', how are you?', '! Who are you?', ', nice to meet you'];
export const GREETING_ANSWER = 'Hello! How can I help you today?';

// ---------------------------------------------------------------------------------------------------------
// Held-out rules

/** Unordered pair hash: symmetric so "23 + 48" and "48 + 23" are held out together (no commutation leak). */
export function isHeldOutPair(a: number, b: number): boolean {
  const lo = Math.min(a, b);
  const hi = Math.max(a, b);
  return (lo * 7919 + hi * 104729 + lo * hi * 31) % 97 < 6;
}

export function isHeldOutWord(word: string): boolean {
  const i = WORDS.indexOf(word);
  return i >= 0 && i % 6 === 0;
}

/** (fact, phrasing) combinations held out: one phrasing per fact, rotating across facts. */
function isHeldOutCombo(fact: number, phrasing: number, phrasings: number): boolean {
  return (fact + phrasing) % phrasings === 0;
}

const TRAIN_WORDS = WORDS.filter((w) => !isHeldOutWord(w));
const HELD_OUT_WORDS = WORDS.filter(isHeldOutWord);
const HELD_OUT_WORD_SET = new Set(HELD_OUT_WORDS);

// ---------------------------------------------------------------------------------------------------------
// Rendering

function reversed(w: string): string {
  return [...w].reverse().join('');
}

function spelled(w: string): string {
  return [...w].join('-');
}

function opposites(): Array<readonly [string, string]> {
  return OPPOSITES.flatMap(([a, b]) => [[a, b] as const, [b, a] as const]);
}

/** Greeting question for opener o and tail t (capitalised as people type it). */
function greeting(o: number, t: number): string {
  return GREETING_OPENERS[o] + GREETING_TAILS[t];
}

function factExample(
  family: 'capital' | 'colour' | 'opposite',
  table: ReadonlyArray<readonly [string, string]>,
  phrasings: ReadonlyArray<(x: string) => string>,
  fact: number,
  phrasing: number,
): QaExample {
  const [subject, answer] = table[fact];
  // Colour answers name the thing so the sentence reads naturally; the model only has to copy its subject.
  return { family, question: phrasings[phrasing](subject), answer };
}

function pick<T>(rng: Generator, items: readonly T[]): T {
  return items[Math.floor(rng.random() * items.length)];
}

function int(rng: Generator, n: number): number {
  return Math.floor(rng.random() * n);
}

/** Random lowercase letter string (3–7 letters) that is not a held-out word: unlimited fresh material. */
function pseudoWord(rng: Generator): string {
  for (;;) {
    const len = 3 + int(rng, 5);
    let w = '';
    for (let i = 0; i < len; i++) w += String.fromCharCode(97 + int(rng, 26));
    if (!HELD_OUT_WORD_SET.has(w)) return w;
  }
}

function trainingWord(rng: Generator): string {
  // Half real words (what users will ask about), half random strings (so the rule, not a lookup, is learnt).
  return rng.random() < 0.5 ? pick(rng, TRAIN_WORDS) : pseudoWord(rng);
}

/** A uniformly drawn (fact, phrasing) combination outside the held-out set. */
function trainingCombo(rng: Generator, facts: number, phrasings: number): [number, number] {
  for (;;) {
    const f = int(rng, facts);
    const p = int(rng, phrasings);
    if (!isHeldOutCombo(f, p, phrasings)) return [f, p];
  }
}

/** One training example of a family, drawn from its training split only. */
export function sampleTrainingExample(rng: Generator, family: PretrainFamily): QaExample {
  switch (family) {
    case 'arithmetic': {
      for (;;) {
        const a = int(rng, 100);
        const b = int(rng, 100);
        if (isHeldOutPair(a, b)) continue;
        return { family, question: pick(rng, ARITHMETIC_PHRASINGS)(a, b), answer: String(a + b) };
      }
    }
    case 'reverse': {
      const w = trainingWord(rng);
      return { family, question: pick(rng, REVERSE_PHRASINGS)(w), answer: reversed(w) };
    }
    case 'spell': {
      const w = trainingWord(rng);
      return { family, question: pick(rng, SPELL_PHRASINGS)(w), answer: spelled(w) };
    }
    case 'capital': {
      const [f, p] = trainingCombo(rng, CAPITALS.length, CAPITAL_PHRASINGS.length);
      return factExample(family, CAPITALS, CAPITAL_PHRASINGS, f, p);
    }
    case 'colour': {
      const [f, p] = trainingCombo(rng, COLOURS.length, COLOUR_PHRASINGS.length);
      return factExample(family, COLOURS, COLOUR_PHRASINGS, f, p);
    }
    case 'opposite': {
      const [f, p] = trainingCombo(rng, opposites().length, OPPOSITE_PHRASINGS.length);
      return factExample(family, opposites(), OPPOSITE_PHRASINGS, f, p);
    }
    case 'greeting': {
      const [o, t] = trainingCombo(rng, GREETING_OPENERS.length, GREETING_TAILS.length);
      return { family, question: greeting(o, t), answer: GREETING_ANSWER };
    }
  }
}

/** Picks a family by weight (weights need not sum to 1). */
function sampleFamily(rng: Generator, weights: Readonly<Record<PretrainFamily, number>>): PretrainFamily {
  const total = PRETRAIN_FAMILIES.reduce((s, f) => s + weights[f], 0);
  let u = rng.random() * total;
  for (const f of PRETRAIN_FAMILIES) {
    u -= weights[f];
    if (u < 0) return f;
  }
  return PRETRAIN_FAMILIES[PRETRAIN_FAMILIES.length - 1];
}

/** `count` training examples from one seed, families mixed by weight. */
export function generateTrainingExamples(
  seed: number,
  count: number,
  weights: Readonly<Record<PretrainFamily, number>> = DEFAULT_FAMILY_WEIGHTS,
): QaExample[] {
  const rng = new Generator(seed);
  const out: QaExample[] = [];
  for (let i = 0; i < count; i++) out.push(sampleTrainingExample(rng, sampleFamily(rng, weights)));
  return out;
}

/** `perFamily` training-split prompts of every family (for the "accuracy on training prompts" figure). */
export function trainingEvalExamples(seed: number, perFamily: number): QaExample[] {
  const rng = new Generator(seed);
  return PRETRAIN_FAMILIES.flatMap((f) => Array.from({ length: perFamily }, () => sampleTrainingExample(rng, f)));
}

/**
 * The held-out evaluation set: every held-out fact/greeting combination and every held-out word in each
 * of its phrasings' rotation, and `arithmeticCount` held-out number pairs (deterministic order). None of
 * these questions can occur in generateTrainingExamples' output.
 */
export function heldOutExamples(arithmeticCount = 200): QaExample[] {
  const out: QaExample[] = [];
  const pairs: Array<[number, number]> = [];
  for (let a = 0; a < 100; a++) for (let b = 0; b < 100; b++) if (isHeldOutPair(a, b)) pairs.push([a, b]);
  // Spread the subset over the whole range instead of taking only small a.
  const stride = Math.max(1, Math.floor(pairs.length / arithmeticCount));
  for (let i = 0; i < pairs.length && out.length < arithmeticCount; i += stride) {
    const [a, b] = pairs[i];
    // Phrasing by output position (not pair index), so every phrasing is tested whatever the stride.
    const phrasing = ARITHMETIC_PHRASINGS[out.length % ARITHMETIC_PHRASINGS.length];
    out.push({ family: 'arithmetic', question: phrasing(a, b), answer: String(a + b) });
  }
  HELD_OUT_WORDS.forEach((w, i) => {
    out.push({ family: 'reverse', question: REVERSE_PHRASINGS[i % REVERSE_PHRASINGS.length](w), answer: reversed(w) });
  });
  HELD_OUT_WORDS.forEach((w, i) => {
    out.push({ family: 'spell', question: SPELL_PHRASINGS[i % SPELL_PHRASINGS.length](w), answer: spelled(w) });
  });
  const facts = [
    ['capital', CAPITALS, CAPITAL_PHRASINGS],
    ['colour', COLOURS, COLOUR_PHRASINGS],
    ['opposite', opposites(), OPPOSITE_PHRASINGS],
  ] as const;
  for (const [family, table, phrasings] of facts) {
    for (let f = 0; f < table.length; f++) {
      for (let p = 0; p < phrasings.length; p++) {
        if (isHeldOutCombo(f, p, phrasings.length)) out.push(factExample(family, table, phrasings, f, p));
      }
    }
  }
  for (let o = 0; o < GREETING_OPENERS.length; o++) {
    for (let t = 0; t < GREETING_TAILS.length; t++) {
      if (isHeldOutCombo(o, t, GREETING_TAILS.length))
        out.push({ family: 'greeting', question: greeting(o, t), answer: GREETING_ANSWER });
    }
  }
  return out;
}

/** The conversation an example trains on: one user turn, one assistant turn (the built-in template's job). */
export function toConversation(ex: QaExample): ChatMessage[] {
  return [
    { role: 'user', content: ex.question },
    { role: 'assistant', content: ex.answer },
  ];
}
