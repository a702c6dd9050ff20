import { existsSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import { describe, expect, it } from 'vitest';
import { baseModelSpec, loadBaseModel } from './base-models';
import { accuracyByFamily, greedyAnswers } from './pretrain';
import { heldOutExamples, type PretrainFamily } from './pretrain-data';

// The same kernel build the pretraining script used, so greedy answers match its report.
v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

/**
 * The committed tiny-chat weights against their own report (models/tiny-chat.json, written by
 * scripts/engine-pretrain.ts): the report's held-out accuracy must be reproduced by the file, and where the
 * report claims ≥ 80 % on a family, three held-out prompts it lists as answered must really get the expected
 * answer. Thresholds come from the report, so a weak model cannot pass by a lucky pick, and a report cannot
 * claim more than the weights do. The weights are committed, so a missing file fails here rather than skipping.
 */

const WEIGHTS = fileURLToPath(new URL('../../models/tiny-chat.safetensors', import.meta.url));
const REPORT = fileURLToPath(new URL('../../models/tiny-chat.json', import.meta.url));
const CHECKED: PretrainFamily[] = ['arithmetic', 'reverse'];

interface Report {
  accuracy: { held_out: Partial<Record<PretrainFamily, { accuracy: number; total: number }>> };
  held_out_samples: Array<{ family: PretrainFamily; question: string; answer: string; correct: boolean }>;
}

describe('tuneboard/tiny-chat weights', () => {
  it('reproduce the report’s held-out accuracy and answer held-out arithmetic/reversal prompts', async () => {
    expect(existsSync(WEIGHTS), 'models/tiny-chat.safetensors is committed (npm run engine:pretrain rebuilds it)').toBe(
      true,
    );
    expect(statSync(WEIGHTS).size).toBeLessThanOrEqual(10 * 1024 * 1024);
    expect(existsSync(REPORT), 'models/tiny-chat.json must accompany the weights').toBe(true);
    const report = JSON.parse(readFileSync(REPORT, 'utf8')) as Report;
    const { model, tokenizer } = loadBaseModel('tuneboard/tiny-chat', new Uint8Array(readFileSync(WEIGHTS)));
    try {
      expect(model.config).toEqual(baseModelSpec('tuneboard/tiny-chat')!.config);
      const heldOut = heldOutExamples();
      for (const family of CHECKED) {
        const claimed = report.accuracy.held_out[family];
        expect(claimed, `report has no held-out accuracy for ${family}`).toBeDefined();
        const graded = await greedyAnswers(
          model,
          tokenizer,
          heldOut.filter((e) => e.family === family),
        );
        const measured = accuracyByFamily(graded)[family]!;
        expect(measured.total).toBe(claimed!.total);
        // Same seeded weights and kernels give the same greedy answers; a little slack for another CPU.
        expect(
          Math.abs(measured.accuracy - claimed!.accuracy),
          `${family}: measured ${measured.accuracy}`,
        ).toBeLessThanOrEqual(0.03);
        if (claimed!.accuracy < 0.8) {
          console.warn(
            `tiny-chat: ${family} held-out accuracy ${(claimed!.accuracy * 100).toFixed(1)} % < 80 %: prompt check not required`,
          );
          continue;
        }
        const prompts = report.held_out_samples.filter((s) => s.family === family && s.correct).slice(0, 3);
        expect(prompts, `${family}: report lists fewer than 3 answered held-out prompts`).toHaveLength(3);
        const answers = await greedyAnswers(
          model,
          tokenizer,
          prompts.map((p) => ({ family, question: p.question, answer: p.answer })),
        );
        expect(answers.map((a) => a.output)).toEqual(prompts.map((p) => p.answer));
      }
    } finally {
      model.release();
    }
  }, 120_000);
});
