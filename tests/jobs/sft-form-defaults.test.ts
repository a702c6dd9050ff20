import v8 from 'node:v8';
import { expect, it } from 'vitest';
import { loadBaseModel } from '@/lib/engine/base-models';
import { BUILTIN_CHAT_TEMPLATE, ChatTemplate } from '@/lib/engine/chat-template';
import { generate } from '@/lib/engine/generate';
import { Generator } from '@/lib/engine/random';
import { trainSft } from '@/lib/engine/train/sft';
import { SFT_FORM_DEFAULTS, sftStepCount } from '@/lib/schemas/training-jobs';

v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

// The fine-tune form's defaults must teach a fact on the first try (issue "run workspace": three attempts and a
// hand-duplicated dataset were needed with the API's defaults): 20 examples of one fact, asked four ways, on the
// built-in model, and greedy decoding must answer it exactly.
const QUESTIONS = [
  'What is the capital of Zorbia?',
  'Which city is the capital of Zorbia?',
  'Name the capital of Zorbia.',
  'Zorbia has which capital?',
];
const ANSWER = 'The capital of Zorbia is Velmont.';

it("the form's SFT defaults teach a 20-example fact to the built-in model on the first try", async () => {
  const tpl = new ChatTemplate(BUILTIN_CHAT_TEMPLATE);
  const { model, tokenizer } = loadBaseModel('tuneboard/tiny-random', null);
  const ask = async () => {
    const [r] = await generate(model, tokenizer, [
      {
        promptTokenIds: tokenizer.encode(
          tpl.render([{ role: 'user', content: QUESTIONS[0] }], { addGenerationPrompt: true }),
        ),
        maxTokens: 40,
        eosTokenId: tokenizer.specialTokenId('<|im_end|>'),
        sampling: { temperature: 0 },
        generator: new Generator(0),
      },
    ]);
    return r.text.trim();
  };
  expect(await ask()).not.toBe(ANSWER);
  const examples = Array.from({ length: 20 }, (_, i) => ({
    line: i + 1,
    messages: [
      { role: 'user', content: QUESTIONS[i % QUESTIONS.length] },
      { role: 'assistant', content: ANSWER },
    ],
  }));
  // As the job runner calls it (lib/jobs/worker/handlers/sft.ts).
  const result = await trainSft(model, tokenizer, examples, {
    batchSize: SFT_FORM_DEFAULTS.batchSize,
    learningRate: SFT_FORM_DEFAULTS.learningRate,
    epochs: SFT_FORM_DEFAULTS.epochs,
    assistantTurns: 'all',
  });
  expect(result.steps).toHaveLength(sftStepCount(20, SFT_FORM_DEFAULTS.batchSize, SFT_FORM_DEFAULTS.epochs));
  expect(await ask()).toBe(ANSWER);
  model.release();
});
