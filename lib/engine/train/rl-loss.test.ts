import { describe, expect, it } from 'vitest';
import { balanceAdvantage, groupAdvantages, rlRowLoss, type RlLossConfig } from './rl-loss';

const ppo: RlLossConfig = {
  loss: 'ppo',
  epsilon: 0.2,
  epsilon_high: 0.2,
  tau: null,
  mask_prob_ratio: false,
  max_negative_advantage_importance_sampling_weight: null,
  importance_sampling_level: 'token',
};
const D = 2 + 1e-6; // Σ mask + 1e-6 for two masked tokens

// Two masked positions: r_0 = 0.5/0.4 = 1.25 (above 1 + ε), r_1 = 1.
const lpNew = [Math.log(0.5), Math.log(0.2), -3];
const row = (advantage: number, old = [Math.log(0.4), Math.log(0.2), -1]) => ({
  mask: [1, 1, 0],
  oldLogprobs: old,
  weights: [1, 1, 7],
  advantages: [advantage, advantage, 99],
});

describe('groupAdvantages (docs/contract.md §5.1)', () => {
  it('centres on the group mean and divides by the population std + 1e-6', () => {
    const a = groupAdvantages([1, 0, 0, 1], true);
    expect(a[0]).toBeCloseTo(0.5 / (0.5 + 1e-6), 12);
    expect(a[1]).toBeCloseTo(-0.5 / (0.5 + 1e-6), 12);
    expect(groupAdvantages([3, 1], false)).toEqual([1, -1]);
    expect(groupAdvantages([2, 2, 2], true)).toEqual([0, 0, 0]);
  });

  it('advantage_balance scales one sign only', () => {
    expect(balanceAdvantage(-1, 0.5)).toBe(-0.5);
    expect(balanceAdvantage(1, 0.5)).toBe(1);
    expect(balanceAdvantage(1, -0.25)).toBe(0.75);
    expect(balanceAdvantage(-1, -0.25)).toBe(-1);
  });
});

describe('rlRowLoss (docs/contract.md §5.4)', () => {
  it('PPO clips a ratio above 1 + ε for a positive advantage (no gradient there)', () => {
    const out = rlRowLoss(lpNew, row(1), ppo);
    expect(out.loss).toBeCloseTo((-1.2 - 1) / D, 9);
    expect(out.grad[0]).toBe(0);
    expect(out.grad[1]).toBeCloseTo(-1 / D, 9);
    expect(out.grad[2]).toBe(0);
    expect(out.maskedTokens).toBe(2);
  });

  it('PPO keeps the unclipped ratio for a negative advantage (pessimistic bound)', () => {
    const out = rlRowLoss(lpNew, row(-1), ppo);
    expect(out.loss).toBeCloseTo((1.25 + 1) / D, 9);
    expect(out.grad[0]).toBeCloseTo(1.25 / D, 9);
  });

  it('CISPO: −clip(sg(r))·A·lp_new', () => {
    const out = rlRowLoss(lpNew, row(1), { ...ppo, loss: 'cispo', epsilon: 1, epsilon_high: 4 });
    expect(out.loss).toBeCloseTo((-1.25 * Math.log(0.5) - 1 * Math.log(0.2)) / D, 9);
    expect(out.grad[0]).toBeCloseTo(-1.25 / D, 9);
    // With a tight clip the detached ratio is clipped to 1 + ε_high.
    const tight = rlRowLoss(lpNew, row(1), { ...ppo, loss: 'cispo', epsilon: 0.1, epsilon_high: 0.1 });
    expect(tight.grad[0]).toBeCloseTo(-1.1 / D, 9);
  });

  it('an unknown old logprob gives ratio 1 and the plain policy gradient', () => {
    const out = rlRowLoss(lpNew, row(2, [NaN, NaN, NaN]), ppo);
    expect(out.loss).toBeCloseTo(-4 / D, 9);
    expect(out.grad[0]).toBeCloseTo(-2 / D, 9);
  });

  it('sequence level: one ratio exp(mean Δ) for every token, gradient shared', () => {
    const r = Math.sqrt(1.25);
    const out = rlRowLoss(lpNew, row(1), { ...ppo, importance_sampling_level: 'sequence' });
    expect(out.loss).toBeCloseTo((-2 * r) / D, 9);
    expect(out.grad[0]).toBeCloseTo(-r / D, 9);
    expect(out.grad[1]).toBeCloseTo(-r / D, 9);
  });

  it('average and geometric_average levels', () => {
    const rs = Math.sqrt(1.25);
    const avg = rlRowLoss(lpNew, row(1), { ...ppo, epsilon: 1, epsilon_high: 1, importance_sampling_level: 'average' });
    expect(avg.loss).toBeCloseTo(-((1.25 + rs) / 2 + (1 + rs) / 2) / D, 9);
    const geo = rlRowLoss(lpNew, row(1), {
      ...ppo,
      epsilon: 1,
      epsilon_high: 1,
      importance_sampling_level: 'geometric_average',
    });
    expect(geo.loss).toBeCloseTo(-(Math.sqrt(1.25 * rs) + Math.sqrt(rs)) / D, 9);
  });

  it('max_negative_advantage_importance_sampling_weight caps every ratio, whatever the sign', () => {
    const pos = rlRowLoss(lpNew, row(1), {
      ...ppo,
      epsilon: 1,
      epsilon_high: 1,
      max_negative_advantage_importance_sampling_weight: 1.1,
    });
    expect(pos.loss).toBeCloseTo((-1.1 - 1) / D, 9);
    expect(pos.grad[0]).toBe(0);
    const uncapped = rlRowLoss(lpNew, row(1), { ...ppo, epsilon: 1, epsilon_high: 1 });
    expect(uncapped.loss).toBeCloseTo((-1.25 - 1) / D, 9);
  });

  it('mask_prob_ratio zeroes ratios outside (1 − ε, 1 + ε_high)', () => {
    const out = rlRowLoss(lpNew, row(-1), { ...ppo, mask_prob_ratio: true });
    // r_0 = 1.25 → 0: ℓ_0 = −min(0·A, clip(0)·A) = −min(0, −0.8) = 0.8.
    expect(out.loss).toBeCloseTo((0.8 + 1) / D, 9);
    expect(out.grad[0]).toBe(0);
  });

  it('kimi_k2_tau subtracts τ·Δ from the advantage, Δ constant', () => {
    const tau = 0.5;
    const a0 = 1 - tau * Math.log(1.25);
    const out = rlRowLoss(lpNew, row(1), { ...ppo, tau });
    expect(out.loss).toBeCloseTo((-1.2 * a0 - 1) / D, 9);
  });

  it('PPO gradients match finite differences at every importance-sampling level (CISPO detaches r by design)', () => {
    const lp = [-0.7, -1.9, -2.2, -0.3];
    const r = {
      mask: [1, 0, 1, 1],
      oldLogprobs: [-0.8, -1, NaN, -0.25],
      weights: [0.5, 0, 1.5, 1],
      advantages: [0.7, 0, 0.7, 0.7],
    };
    for (const level of ['token', 'sequence', 'average', 'geometric_average'] as const) {
      for (const loss of ['ppo'] as const) {
        const cfg = { ...ppo, loss, epsilon: 0.5, epsilon_high: 0.5, importance_sampling_level: level, tau: 0.1 };
        const { grad } = rlRowLoss(lp, r, cfg);
        for (let t = 0; t < lp.length; t++) {
          const h = 1e-6;
          const up = lp.slice();
          up[t] += h;
          const down = lp.slice();
          down[t] -= h;
          // τ·Δ is a constant in the objective, so the numeric derivative holds the advantage shift fixed.
          const fixed = {
            ...r,
            advantages: r.advantages.map(
              (a, i) => a - (Number.isNaN(r.oldLogprobs[i]) ? 0 : 0.1 * (lp[i] - r.oldLogprobs[i])),
            ),
          };
          const f = (x: number[]) => rlRowLoss(x, fixed, { ...cfg, tau: null }).loss;
          const g2 = rlRowLoss(lp, fixed, { ...cfg, tau: null }).grad;
          expect(grad[t]).toBeCloseTo(g2[t], 9);
          // With lp_old = sg(lp_new) the loss value does not move with lp_new there, only its gradient does.
          if (Number.isNaN(r.oldLogprobs[t])) continue;
          expect(grad[t], `${level} ${loss} t=${t}`).toBeCloseTo((f(up) - f(down)) / (2 * h), 5);
        }
      }
    }
  });
});
