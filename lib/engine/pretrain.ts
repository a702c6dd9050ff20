import { BUILTIN_CHAT_TEMPLATE, ChatTemplate } from './chat-template';
import { generate } from './generate';
import type { Model } from './model';
import { PRETRAIN_FAMILIES, type PretrainFamily, type QaExample } from './pretrain-data';
import { Generator } from './random';
import type { Tokenizer } from './tokenizer';

/**
 * Pure helpers of the tiny-chat pretraining (scripts/engine-pretrain.ts does the file I/O): the learning
 * rate schedule and greedy exact-match evaluation through the same generate() path the server uses.
 */

/**
 * Linear warm-up then cosine decay to `floor`·peak, one entry per step — trainSft takes a per-batch list
 * (its last entry repeats), which is how a schedule reaches it.
 */
export function warmupCosineSchedule(steps: number, peak: number, warmup: number, floor = 0.1): number[] {
  return Array.from({ length: steps }, (_, s) => {
    if (s < warmup) return (peak * (s + 1)) / warmup;
    const progress = steps - warmup <= 1 ? 1 : (s - warmup) / (steps - warmup - 1);
    return peak * (floor + (1 - floor) * 0.5 * (1 + Math.cos(Math.PI * progress)));
  });
}

/** The prompt a chat request would send for this question: built-in template with the generation prompt. */
export function chatPromptIds(
  tokenizer: Tokenizer,
  question: string,
  template = new ChatTemplate(BUILTIN_CHAT_TEMPLATE),
): number[] {
  return tokenizer.encode(template.render([{ role: 'user', content: question }], { addGenerationPrompt: true }));
}

export interface GradedAnswer extends QaExample {
  output: string;
  correct: boolean;
}

/** Greedy answers (temperature 0, stop at <|im_end|>) for many questions, batched `batch` at a time. */
export async function greedyAnswers(
  model: Model,
  tokenizer: Tokenizer,
  examples: readonly QaExample[],
  options: { maxTokens?: number; batch?: number } = {},
): Promise<GradedAnswer[]> {
  const template = new ChatTemplate(BUILTIN_CHAT_TEMPLATE);
  const eos = tokenizer.specialTokenId('<|im_end|>');
  const batch = options.batch ?? 64;
  const out: GradedAnswer[] = [];
  for (let i = 0; i < examples.length; i += batch) {
    const chunk = examples.slice(i, i + batch);
    const results = await generate(
      model,
      tokenizer,
      chunk.map((ex) => ({
        promptTokenIds: chatPromptIds(tokenizer, ex.question, template),
        // Room for the longest answer plus slack, so a wrong-but-long answer is seen as wrong, not cut.
        maxTokens: options.maxTokens ?? ex.answer.length + 8,
        eosTokenId: eos,
        sampling: { temperature: 0 },
        generator: new Generator(0),
      })),
    );
    chunk.forEach((ex, j) => out.push({ ...ex, output: results[j].text, correct: results[j].text === ex.answer }));
  }
  return out;
}

export interface FamilyAccuracy {
  correct: number;
  total: number;
  accuracy: number;
}

/** Exact-match accuracy per family (families with no example are left out). */
export function accuracyByFamily(graded: readonly GradedAnswer[]): Partial<Record<PretrainFamily, FamilyAccuracy>> {
  const out: Partial<Record<PretrainFamily, FamilyAccuracy>> = {};
  for (const family of PRETRAIN_FAMILIES) {
    const rows = graded.filter((g) => g.family === family);
    if (rows.length === 0) continue;
    const correct = rows.filter((g) => g.correct).length;
    out[family] = { correct, total: rows.length, accuracy: correct / rows.length };
  }
  return out;
}
