import { balanceAdvantage, groupAdvantages, rlRowLoss, type RlLossConfig } from './rl-loss';
import { rowTensors, type RlRowData } from './rl';

/**
 * Shared test vectors for the RL objective: inputs and this implementation's outputs for every combination of
 * the experimental_config switches that reach the loss. `scripts/make-rl-loss-vectors.ts` writes them to
 * tests/fixtures/rl-loss-vectors.json; the Python worker's tests assert that PyTorch computes the same numbers,
 * and rl-loss-vectors.test.ts that this code still does. NaN (an unknown sampler logprob) is written as null.
 */

function lcg(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const round = (x: number) => Number(x.toPrecision(12));
const nanToNull = (xs: ArrayLike<number>) => Array.from(xs, (x) => (Number.isNaN(x) ? null : round(x)));

export function rlLossVectors() {
  const rand = lcg(7);
  const rowLoss: unknown[] = [];
  for (const loss of ['ppo', 'cispo'] as const)
    for (const level of ['token', 'sequence', 'average', 'geometric_average'] as const)
      for (const maskProbRatio of [false, true])
        for (const tau of [null, 0.5])
          for (const cap of [null, 1.1]) {
            const n = 7;
            const lpNew = Array.from({ length: n }, () => round(-0.1 - 2.5 * rand()));
            const mask = Array.from({ length: n }, (_, t) => (t === 0 || rand() < 0.15 ? 0 : 1));
            // Old logprobs near the new ones (ratios around 1, some outside the clip range); one unknown.
            const old = lpNew.map((lp, t) => (t === 3 ? NaN : round(lp + (rand() - 0.5) * 0.8)));
            const weights = Array.from({ length: n }, () => round(0.5 + rand()));
            const sign = rand() < 0.5 ? -1 : 1;
            const advantages = Array.from({ length: n }, () => round(sign * (0.2 + rand())));
            const config: RlLossConfig = {
              loss,
              epsilon: loss === 'ppo' ? 0.2 : 1.0,
              epsilon_high: loss === 'ppo' ? 0.28 : 4.0,
              tau,
              mask_prob_ratio: maskProbRatio,
              max_negative_advantage_importance_sampling_weight: cap,
              importance_sampling_level: level,
            };
            const out = rlRowLoss(lpNew, { mask, oldLogprobs: old, weights, advantages }, config);
            rowLoss.push({
              config,
              lp_new: lpNew,
              mask,
              old_logprobs: nanToNull(old),
              weights,
              advantages,
              expected: { loss: round(out.loss), grad: nanToNull(out.grad), masked_tokens: out.maskedTokens },
            });
          }

  const advantages: unknown[] = [];
  for (const rewards of [[1, 0, 0.5, 0.25], [2, 2, 2], [0.3], [-1, 4]])
    for (const scale of [true, false])
      advantages.push({ rewards, scale_rewards: scale, expected: groupAdvantages(rewards, scale).map(round) });

  const balance: unknown[] = [];
  for (const a of [-1.5, 0, 0.75])
    for (const b of [-0.5, 0, 0.3]) balance.push({ a, b, expected: round(balanceAdvantage(a, b)) });

  // Batch normalisation of weights and advantages over several rows, two histories of one trajectory included.
  const rows: RlRowData[] = [
    {
      label: 'a',
      trajectory: 0,
      ids: [1, 2, 3, 4, 5],
      mask: [0, 0, 1, 1, 1],
      oldLogprobs: [NaN, NaN, -0.5, -1, -0.2],
      advantage: 1.2,
    },
    { label: 'b', trajectory: 0, ids: [1, 2, 3], mask: [0, 1, 1], oldLogprobs: [NaN, -0.3, NaN], advantage: 1.2 },
    {
      label: 'c',
      trajectory: 1,
      ids: [1, 2, 3, 4],
      mask: [0, 0, 0, 1],
      oldLogprobs: [NaN, NaN, NaN, -2],
      advantage: -0.7,
    },
  ];
  const tensors = rowTensors(rows, false).map((t) => ({
    mask: Array.from(t.mask),
    old_logprobs: nanToNull(t.oldLogprobs),
    weights: Array.from(t.weights, round),
    advantages: Array.from(t.advantages, round),
  }));
  const rowTensorsCase = {
    rows: rows.map((r) => ({
      trajectory: r.trajectory,
      ids: r.ids,
      mask: r.mask,
      old_logprobs: nanToNull(r.oldLogprobs),
      advantage: r.advantage,
    })),
    allow_training_without_logprobs: false,
    expected: tensors,
  };
  return { row_loss: rowLoss, group_advantages: advantages, balance_advantage: balance, row_tensors: [rowTensorsCase] };
}
