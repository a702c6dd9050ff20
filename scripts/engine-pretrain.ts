/**
 * Pretrains the built-in chat model `tuneboard/tiny-chat` from the seeded `tuneboard/tiny-random` init on
 * synthetic chat data (lib/engine/pretrain-data.ts: arithmetic, reversal, spelling, small fact tables,
 * greetings), with the engine's own SFT code (assistant-only loss), on one core, deterministic per seed.
 * Writes models/tiny-chat.safetensors (the weights the server loads) and models/tiny-chat.json (a report).
 *
 *   npm run engine:pretrain -- [--steps 2200] [--batch 32] [--lr 3e-3] [--warmup 100] [--max-minutes 25]
 *                              [--seed 1] [--eval-every 250] [--out models/tiny-chat]
 *
 * All file I/O of the pretraining lives here; the data generator and evaluation in lib/engine stay pure.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import { loadBaseModel } from '@/lib/engine/base-models';
import { parameterCount } from '@/lib/engine/model';
import {
  DEFAULT_FAMILY_WEIGHTS,
  PRETRAIN_FAMILIES,
  generateTrainingExamples,
  heldOutExamples,
  toConversation,
  trainingEvalExamples,
  type QaExample,
} from '@/lib/engine/pretrain-data';
import { accuracyByFamily, greedyAnswers, warmupCosineSchedule, type GradedAnswer } from '@/lib/engine/pretrain';
import { encodeModel } from '@/lib/engine/safetensors';
import { trainSft, type SftStepMetrics } from '@/lib/engine/train/sft';

// Must run before the first WasmHeap exists (Node 20): the FMA kernel build is 30–40 % faster.
v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

const MAX_WEIGHTS_BYTES = 10 * 1024 * 1024;

const { values: flags } = parseArgs({
  options: {
    steps: { type: 'string', default: '2200' },
    batch: { type: 'string', default: '32' },
    lr: { type: 'string', default: '3e-3' },
    warmup: { type: 'string', default: '100' },
    'lr-floor': { type: 'string', default: '0.05' },
    'max-minutes': { type: 'string', default: '25' },
    seed: { type: 'string', default: '1' },
    'eval-every': { type: 'string', default: '250' },
    out: { type: 'string', default: 'models/tiny-chat' },
    'no-write': { type: 'boolean', default: false },
  },
});

function num(name: keyof typeof flags): number {
  const v = Number(flags[name]);
  if (!Number.isFinite(v)) throw new Error(`--${name} must be a number, got ${String(flags[name])}`);
  return v;
}

const steps = num('steps');
const batchSize = num('batch');
const peakLr = num('lr');
const warmup = num('warmup');
const lrFloor = num('lr-floor');
const maxMinutes = num('max-minutes');
const seed = num('seed');
const evalEvery = num('eval-every');

function fmtAcc(graded: readonly GradedAnswer[]): string {
  const acc = accuracyByFamily(graded);
  return PRETRAIN_FAMILIES.map((f) => `${f} ${((acc[f]?.accuracy ?? 0) * 100).toFixed(0)}%`).join(', ');
}

/** The first `perFamily` held-out prompts of each family: a small, fixed probe of the held-out set for progress lines during training. */
function probe(examples: readonly QaExample[], perFamily: number): QaExample[] {
  return PRETRAIN_FAMILIES.flatMap((f) => examples.filter((e) => e.family === f).slice(0, perFamily));
}

async function main(): Promise<void> {
  const started = performance.now();
  const elapsed = () => (performance.now() - started) / 1000;
  // The seeded TINY init: tiny-chat has the same config and is what this script produces.
  const { model, tokenizer, spec } = loadBaseModel('tuneboard/tiny-random', null);
  console.log(`model: ${spec.name} init, ${parameterCount(model.config)} parameters, ctx ${model.config.ctx}`);

  // trainSft takes the whole example list and one optimizer for its lifetime, so the stream of
  // steps × batch examples is materialised up front (≈ 0.6 ms per example to tokenise).
  const train = generateTrainingExamples(seed, steps * batchSize);
  const heldOut = heldOutExamples();
  const trainEval = trainingEvalExamples(seed + 1000, 50);
  const heldOutQuestions = new Set(heldOut.map((e) => e.question));
  const leaks = train.filter((e) => heldOutQuestions.has(e.question)).length;
  if (leaks > 0) throw new Error(`${leaks} training examples are held-out questions`);
  const lrs = warmupCosineSchedule(steps, peakLr, warmup, lrFloor);
  console.log(
    `data: ${train.length} examples (${steps} steps × ${batchSize}), held out ${heldOut.length}; generated in ${elapsed().toFixed(1)} s`,
  );

  const before = await greedyAnswers(model, tokenizer, probe(heldOut, 10));
  console.log(`held-out probe before training: ${fmtAcc(before)}`);

  const history: SftStepMetrics[] = [];
  const evals: Array<{ step: number; seconds: number; heldOutProbe: string }> = [];
  const abort = new AbortController();
  let trainStart = 0;
  let trainTokens = 0;
  // Throughput excludes step 1: its time is spent before the first onStep (mixed with tokenisation).
  let timedTokens = 0;
  let evalSeconds = 0;
  // Tokens processed per step (prompt + answer of every example), to report throughput: trainSft reports
  // trainable tokens only. The template adds the same fixed overhead to every example.
  const overhead = tokenizer.encode('<|im_start|>user\n<|im_end|>\n<|im_start|>assistant\n<|im_end|>\n').length;
  const exampleTokens = (e: QaExample) =>
    overhead + tokenizer.encode(e.question).length + tokenizer.encode(e.answer).length;

  const examples = train.map((e, i) => ({ line: i + 1, messages: toConversation(e) }));
  try {
    await trainSft(model, tokenizer, examples, {
      batchSize,
      learningRate: lrs,
      assistantTurns: 'all',
      signal: abort.signal,
      onStep: async (m, b) => {
        if (b === 0) trainStart = performance.now();
        history.push(m);
        for (const e of train.slice(b * batchSize, (b + 1) * batchSize)) {
          const n = exampleTokens(e);
          trainTokens += n;
          if (b > 0) timedTokens += n;
        }
        const s = b + 1;
        if (s % 50 === 0) {
          const recent = history.slice(-50);
          const loss = recent.reduce((a, x) => a + x.loss, 0) / recent.length;
          const secs = (performance.now() - trainStart) / 1000 - evalSeconds;
          console.log(
            `step ${s}/${steps} loss ${loss.toFixed(4)} lr ${m.learning_rate.toExponential(2)} gnorm ${m.grad_norm.toFixed(2)} ` +
              `${(timedTokens / Math.max(secs, 1e-9)).toFixed(0)} tok/s, ${elapsed().toFixed(0)} s`,
          );
        }
        if (evalEvery > 0 && s % evalEvery === 0 && s < steps) {
          const t0 = performance.now();
          const acc = fmtAcc(await greedyAnswers(model, tokenizer, probe(heldOut, 20)));
          evalSeconds += (performance.now() - t0) / 1000;
          evals.push({ step: s, seconds: Math.round(elapsed()), heldOutProbe: acc });
          console.log(`  held-out probe @${s}: ${acc}`);
        }
        // The wall-clock bound: stop after this step (trainSft checks the signal before the next batch).
        if (elapsed() > maxMinutes * 60) abort.abort(new Error('time limit'));
      },
    });
  } catch (err) {
    if (!abort.signal.aborted) throw err;
    console.log(`stopped by the ${maxMinutes}-minute limit after ${history.length} of ${steps} steps`);
  }
  const trainSeconds = (performance.now() - trainStart) / 1000 - evalSeconds;
  const totalSeconds = elapsed();

  const gradedHeldOut = await greedyAnswers(model, tokenizer, heldOut);
  const gradedTrain = await greedyAnswers(model, tokenizer, trainEval);
  const heldOutAcc = accuracyByFamily(gradedHeldOut);
  const trainAcc = accuracyByFamily(gradedTrain);
  console.log(`held-out accuracy: ${fmtAcc(gradedHeldOut)}`);
  console.log(`training-prompt accuracy: ${fmtAcc(gradedTrain)}`);
  for (const f of PRETRAIN_FAMILIES) {
    const wrong = gradedHeldOut.filter((g) => g.family === f && !g.correct).slice(0, 3);
    for (const w of wrong)
      console.log(
        `  wrong [${f}] ${JSON.stringify(w.question)} → ${JSON.stringify(w.output)} (want ${JSON.stringify(w.answer)})`,
      );
  }

  // Loss curve summary: mean loss over windows of ~5 % of the run, plus first/last steps.
  const window = Math.max(1, Math.floor(history.length / 20));
  const lossCurve: Array<{ step: number; loss: number }> = [];
  for (let i = 0; i < history.length; i += window) {
    const w = history.slice(i, i + window);
    lossCurve.push({ step: i + w.length, loss: round(w.reduce((a, x) => a + x.loss, 0) / w.length, 4) });
  }
  const report = {
    model: 'tuneboard/tiny-chat',
    init: 'tuneboard/tiny-random (seeded)',
    config: model.config,
    parameters: parameterCount(model.config),
    seed,
    families: PRETRAIN_FAMILIES.map((f) => ({ name: f, weight: DEFAULT_FAMILY_WEIGHTS[f] })),
    training: {
      steps_planned: steps,
      steps: history.length,
      batch_size: batchSize,
      examples: history.length * batchSize,
      tokens: trainTokens,
      trainable_tokens: history.reduce((a, m) => a + m.num_trainable_tokens, 0),
      lr: { peak: peakLr, warmup_steps: warmup, schedule: 'linear warm-up, cosine decay', floor: lrFloor },
      optimizer: 'AdamW (trainSft: beta 0.9/0.99, weight decay 0.01, clip 1.0)',
      train_seconds: round(trainSeconds, 1),
      total_seconds: round(totalSeconds, 1),
      tokens_per_second: Math.round(timedTokens / trainSeconds),
      threads: 1,
      relaxed_simd: true,
    },
    loss: {
      first: round(history[0]?.loss ?? NaN, 4),
      final_mean_last_50: round(history.slice(-50).reduce((a, x) => a + x.loss, 0) / Math.min(50, history.length), 4),
      curve: lossCurve,
    },
    probes: evals,
    accuracy: {
      held_out: heldOutAcc,
      training_prompts: trainAcc,
    },
    held_out_samples: PRETRAIN_FAMILIES.flatMap((f) =>
      gradedHeldOut
        .filter((g) => g.family === f)
        .slice(0, 5)
        .map((g) => ({ family: f, question: g.question, answer: g.answer, output: g.output, correct: g.correct })),
    ),
  };

  if (flags['no-write']) {
    console.log(JSON.stringify(report.training, null, 2));
    return;
  }
  const weights = encodeModel(model, {
    'tuneboard.description': 'tiny-chat: synthetic-task chat pretraining (scripts/engine-pretrain.ts)',
  });
  if (weights.byteLength > MAX_WEIGHTS_BYTES)
    throw new Error(`weights are ${weights.byteLength} bytes, over the 10 MB limit`);
  const out = String(flags.out);
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(`${out}.safetensors`, weights);
  writeFileSync(`${out}.json`, JSON.stringify(report, null, 2) + '\n');
  console.log(
    `wrote ${out}.safetensors (${(weights.byteLength / 1e6).toFixed(2)} MB) and ${out}.json in ${totalSeconds.toFixed(0)} s`,
  );
  model.release();
}

function round(x: number, digits: number): number {
  const k = 10 ** digits;
  return Math.round(x * k) / k;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
