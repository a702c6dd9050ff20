import { describe, expect, it } from 'vitest';
import { BUILTIN_CHAT_TEMPLATE, ChatTemplate, tokenizeConversation } from './chat-template';
import { warmupCosineSchedule } from './pretrain';
import {
  GREETING_ANSWER,
  PRETRAIN_FAMILIES,
  WORDS,
  generateTrainingExamples,
  heldOutExamples,
  isHeldOutPair,
  isHeldOutWord,
  toConversation,
  trainingEvalExamples,
  type QaExample,
} from './pretrain-data';
import { Tokenizer } from './tokenizer';

const NUMBERS = /(\d+)\D+(\d+)/;

/** The word a reverse/spell question is about: quoted, else the word after "spell"/"Write". */
function subjectWord(question: string): string {
  const quoted = /'([a-z]+)'/.exec(question);
  if (quoted) return quoted[1];
  const bare = /(?:spell|Write) ([a-z]+)/.exec(question);
  if (!bare) throw new Error(`no word in ${question}`);
  return bare[1];
}

function checkAnswer(ex: QaExample): void {
  if (ex.family === 'arithmetic') {
    const m = NUMBERS.exec(ex.question)!;
    expect(ex.answer).toBe(String(Number(m[1]) + Number(m[2])));
  } else if (ex.family === 'reverse') {
    expect(ex.answer).toBe([...subjectWord(ex.question)].reverse().join(''));
  } else if (ex.family === 'spell') {
    expect(ex.answer).toBe([...subjectWord(ex.question)].join('-'));
  } else if (ex.family === 'greeting') {
    expect(ex.answer).toBe(GREETING_ANSWER);
  }
}

describe('pretraining data', () => {
  const train = generateTrainingExamples(11, 20_000);
  const heldOut = heldOutExamples();

  it('is deterministic per seed', () => {
    expect(generateTrainingExamples(11, 300)).toEqual(train.slice(0, 300));
    expect(generateTrainingExamples(12, 300)).not.toEqual(train.slice(0, 300));
    expect(heldOutExamples()).toEqual(heldOut);
    expect(trainingEvalExamples(3, 5)).toEqual(trainingEvalExamples(3, 5));
  });

  it('covers every family in training and held-out sets, with correct answers', () => {
    for (const f of PRETRAIN_FAMILIES) {
      expect(train.filter((e) => e.family === f).length, f).toBeGreaterThan(300);
      expect(heldOut.filter((e) => e.family === f).length, f).toBeGreaterThanOrEqual(8);
    }
    train.slice(0, 2000).forEach(checkAnswer);
    heldOut.forEach(checkAnswer);
    expect(heldOut.find((e) => e.family === 'arithmetic' && e.question.includes('+'))).toBeDefined();
    expect(WORDS.length).toBeGreaterThan(300);
    expect(new Set(WORDS).size).toBe(WORDS.length);
  });

  it('keeps the held-out split disjoint from training', () => {
    const heldOutQuestions = new Set(heldOut.map((e) => e.question));
    expect(train.filter((e) => heldOutQuestions.has(e.question))).toEqual([]);
    for (const e of train) {
      if (e.family === 'arithmetic') {
        const m = NUMBERS.exec(e.question)!;
        expect(isHeldOutPair(Number(m[1]), Number(m[2])), e.question).toBe(false);
      } else if (e.family === 'reverse' || e.family === 'spell') {
        expect(isHeldOutWord(subjectWord(e.question)), e.question).toBe(false);
      }
    }
    // The held-out set really is held out by the rules above (and the pair rule is symmetric).
    for (const e of heldOut) {
      if (e.family === 'arithmetic') {
        const m = NUMBERS.exec(e.question)!;
        expect(isHeldOutPair(Number(m[1]), Number(m[2]))).toBe(true);
        expect(isHeldOutPair(Number(m[2]), Number(m[1]))).toBe(true);
      } else if (e.family === 'reverse' || e.family === 'spell') {
        expect(isHeldOutWord(subjectWord(e.question))).toBe(true);
      }
    }
    // Training still sees the held-out facts' subjects, in other phrasings (recombination, not new facts).
    const paris = train.filter((e) => e.answer === 'Paris').map((e) => e.question);
    expect(new Set(paris).size).toBeGreaterThan(1);
  });

  it('renders as a chat turn whose loss mask covers exactly the answer and its end-of-turn', () => {
    const tok = new Tokenizer();
    const tpl = new ChatTemplate(BUILTIN_CHAT_TEMPLATE);
    const ex = { family: 'arithmetic', question: 'What is 23 + 48?', answer: '71' } as const;
    const conv = tokenizeConversation(tok, tpl, toConversation(ex), { assistantTurns: 'all' });
    const trained = conv.ids.filter((_, i) => conv.mask[i] === 1);
    expect(tok.decode(trained, { skipSpecialTokens: false })).toBe('71<|im_end|>');
    expect(tok.decode(conv.ids, { skipSpecialTokens: false })).toBe(
      '<|im_start|>user\nWhat is 23 + 48?<|im_end|>\n<|im_start|>assistant\n71<|im_end|>\n',
    );
  });

  it('schedules a linear warm-up and a cosine decay to the floor', () => {
    const lrs = warmupCosineSchedule(100, 1e-3, 10, 0.1);
    expect(lrs).toHaveLength(100);
    expect(lrs[0]).toBeCloseTo(1e-4);
    expect(lrs[9]).toBeCloseTo(1e-3);
    expect(lrs[10]).toBeCloseTo(1e-3);
    expect(lrs[99]).toBeCloseTo(1e-4);
    for (let i = 11; i < 100; i++) expect(lrs[i]).toBeLessThanOrEqual(lrs[i - 1]);
  });
});
