/**
 * The RL objective of docs/contract.md §5.3–5.4 for one row (one tokenised history), as a pure function of
 * the current policy's per-token logprobs: it returns the loss and its derivative with respect to each
 * logprob, which the trainer back-propagates. Arrays are indexed by position t of the logprob (predicting
 * token t+1); masked-out positions carry nothing.
 */

export type ImportanceSamplingLevel = 'token' | 'sequence' | 'average' | 'geometric_average';

/** The resolved RL configuration (same fields as lib/schemas' ResolvedRlConfig; the engine imports nothing). */
export interface RlConfig {
  loss: 'ppo' | 'cispo';
  epsilon: number;
  epsilon_high: number;
  advantage_balance: number;
  tau: number | null;
  learning_rate: number;
  mask_prob_ratio: boolean;
  max_negative_advantage_importance_sampling_weight: number | null;
  precalculate_logprobs: boolean;
  scale_rewards: boolean;
  importance_sampling_level: ImportanceSamplingLevel;
  allow_training_without_logprobs: boolean;
}

export interface RlRow {
  /** 1 where the position's target token is trained. */
  mask: ArrayLike<number>;
  /** Sampler logprob per position; NaN = unknown (ratio 1, lp_old = sg(lp_new)). */
  oldLogprobs: ArrayLike<number>;
  /** Token weight w_t after batch normalisation (docs/contract.md §5.3). */
  weights: ArrayLike<number>;
  /** Advantage A_t after advantage_balance and batch normalisation (docs/contract.md §5.3). */
  advantages: ArrayLike<number>;
}

export type RlLossConfig = Pick<
  RlConfig,
  | 'loss'
  | 'epsilon'
  | 'epsilon_high'
  | 'tau'
  | 'mask_prob_ratio'
  | 'max_negative_advantage_importance_sampling_weight'
  | 'importance_sampling_level'
>;

export interface RlRowLoss {
  /** L = Σ ℓ_t·w_t·mask_t / (Σ mask_t + 1e-6) (docs/contract.md §5.4.8). */
  loss: number;
  /** dL/dlp_new per position. */
  grad: Float64Array;
  maskedTokens: number;
}

const clamp = (x: number, lo: number, hi: number) => Math.min(Math.max(x, lo), hi);

export function rlRowLoss(lpNew: ArrayLike<number>, row: RlRow, cfg: RlLossConfig): RlRowLoss {
  const n = lpNew.length;
  const lo = 1 - cfg.epsilon;
  const hi = 1 + cfg.epsilon_high;
  let maskSum = 0;
  let deltaSum = 0;
  const delta = new Float64Array(n);
  for (let t = 0; t < n; t++) {
    if (row.mask[t] !== 1) continue;
    maskSum++;
    // docs/contract.md §5.4.1: unknown lp_old is lp_new itself as a constant, so Δ = 0 but dΔ/dlp_new is still 1.
    const old = row.oldLogprobs[t];
    delta[t] = Number.isNaN(old) ? 0 : lpNew[t] - old;
    deltaSum += delta[t];
  }
  const denom = maskSum + 1e-6;
  const meanDelta = maskSum > 0 ? deltaSum / maskSum : 0;
  const rSeq = Math.exp(meanDelta);
  const grad = new Float64Array(n);
  let loss = 0;
  // Σ over tokens of (dℓ_s/dr_s · weight) · ∂r_s/∂(mean Δ): the sequence-level part reaches every token.
  let seqCoef = 0;
  const level = cfg.importance_sampling_level;
  for (let t = 0; t < n; t++) {
    if (row.mask[t] !== 1) continue;
    const rTok = Math.exp(delta[t]);
    // r and its partial derivatives through Δ_t (token part) and through mean Δ (sequence part), docs/contract.md §5.4.3.
    let r: number;
    let dTok: number;
    let dSeq: number;
    switch (level) {
      case 'sequence':
        r = rSeq;
        dTok = 0;
        dSeq = rSeq;
        break;
      case 'average':
        r = (rTok + rSeq) / 2;
        dTok = rTok / 2;
        dSeq = rSeq / 2;
        break;
      case 'geometric_average':
        r = Math.sqrt(rTok * rSeq);
        dTok = r / 2;
        dSeq = r / 2;
        break;
      default:
        r = rTok;
        dTok = rTok;
        dSeq = 0;
    }
    // docs/contract.md §5.4.4: the cap applies to every token, whatever the advantage's sign; a capped ratio is constant.
    const cap = cfg.max_negative_advantage_importance_sampling_weight;
    if (cap !== null && r > cap) {
      r = cap;
      dTok = 0;
      dSeq = 0;
    }
    // docs/contract.md §5.4.5: ratios outside (1−ε, 1+ε_high) are zeroed.
    if (cfg.mask_prob_ratio && !(r > lo && r < hi)) {
      r = 0;
      dTok = 0;
      dSeq = 0;
    }
    // docs/contract.md §5.4.6: A ← A − τ·Δ with Δ constant.
    const A = cfg.tau !== null ? row.advantages[t] - cfg.tau * delta[t] : row.advantages[t];
    let ell: number;
    let dEllDr = 0; // ∂ℓ/∂r (PPO)
    let dEllDlp = 0; // ∂ℓ/∂lp_new directly (CISPO)
    if (cfg.loss === 'ppo') {
      const unclipped = r * A;
      const rc = clamp(r, lo, hi);
      const clipped = rc * A;
      // docs/contract.md §5.4.7 PPO: ℓ = −min(r·A, clip(r)·A); the gradient follows the branch the min picks.
      if (unclipped <= clipped) {
        ell = -unclipped;
        dEllDr = -A;
      } else {
        ell = -clipped;
        dEllDr = r > lo && r < hi ? -A : 0;
      }
    } else {
      // docs/contract.md §5.4.7 CISPO: ℓ = −clip(sg(r), 1−ε, 1+ε_high)·A·lp_new.
      const rc = clamp(r, lo, hi);
      ell = -rc * A * lpNew[t];
      dEllDlp = -rc * A;
    }
    const scale = row.weights[t] / denom;
    loss += ell * scale;
    grad[t] += dEllDlp * scale + dEllDr * dTok * scale;
    seqCoef += dEllDr * dSeq * scale;
  }
  if (seqCoef !== 0 && maskSum > 0) {
    const share = seqCoef / maskSum;
    for (let t = 0; t < n; t++) if (row.mask[t] === 1) grad[t] += share;
  }
  return { loss, grad, maskedTokens: maskSum };
}

/**
 * docs/contract.md §5.1: per-group advantages. A_i = r_i − mean, divided by (std + 1e-6) when scale_rewards; the
 * population std (1/n).
 */
export function groupAdvantages(rewards: readonly number[], scaleRewards: boolean): number[] {
  const n = rewards.length;
  if (n === 0) return [];
  const mean = rewards.reduce((a, b) => a + b, 0) / n;
  const std = Math.sqrt(rewards.reduce((a, r) => a + (r - mean) ** 2, 0) / n);
  return rewards.map((r) => (scaleRewards ? (r - mean) / (std + 1e-6) : r - mean));
}

/** docs/contract.md §5.3: b > 0 scales negative advantages by (1 − b); b < 0 scales positive ones by (1 + b). */
export function balanceAdvantage(a: number, b: number): number {
  if (b > 0 && a < 0) return a * (1 - b);
  if (b < 0 && a > 0) return a * (1 + b);
  return a;
}
