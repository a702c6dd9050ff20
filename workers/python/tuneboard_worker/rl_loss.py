"""The RL objective, the same mathematics as the built-in engine (lib/engine/train/rl-loss.ts), in PyTorch.

The TypeScript engine computes the loss and its gradient by hand; here autograd differentiates the same
expression, written so that each "constant" of the reference (a stop-gradient) is detached and each branch
(clip, cap, min) passes the gradient exactly where the reference does. tests/test_rl_loss.py checks loss and
gradient against vectors produced by the TypeScript code for every experimental_config switch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch


@dataclass(frozen=True)
class LossConfig:
    loss: str  # "ppo" | "cispo"
    epsilon: float
    epsilon_high: float
    tau: float | None
    mask_prob_ratio: bool
    max_negative_advantage_importance_sampling_weight: float | None
    importance_sampling_level: str  # token | sequence | average | geometric_average

    @staticmethod
    def from_config(c: dict) -> "LossConfig":
        return LossConfig(
            loss=c["loss"],
            epsilon=float(c["epsilon"]),
            epsilon_high=float(c["epsilon_high"]),
            tau=None if c.get("tau") is None else float(c["tau"]),
            mask_prob_ratio=bool(c["mask_prob_ratio"]),
            max_negative_advantage_importance_sampling_weight=(
                None
                if c.get("max_negative_advantage_importance_sampling_weight") is None
                else float(c["max_negative_advantage_importance_sampling_weight"])
            ),
            importance_sampling_level=c["importance_sampling_level"],
        )


def rl_row_loss(
    lp_new: torch.Tensor,
    mask: torch.Tensor,
    old_logprobs: torch.Tensor,
    weights: torch.Tensor,
    advantages: torch.Tensor,
    cfg: LossConfig,
) -> tuple[torch.Tensor, int]:
    """Loss of one row: Σ ℓ_t·w_t·mask_t / (Σ mask_t + 1e-6). Old logprobs NaN = unknown (ratio 1).

    All tensors are 1-D over logprob positions (position t predicts token t+1). Returns (loss, masked tokens).
    """
    m = mask > 0.5
    mask_sum = int(m.sum().item())
    zero = lp_new - lp_new.detach()  # 0 with derivative 1: an unknown lp_old is sg(lp_new)
    unknown = torch.isnan(old_logprobs)
    delta = torch.where(unknown, zero, lp_new - torch.nan_to_num(old_logprobs))
    delta = torch.where(m, delta, zero * 0)
    mean_delta = delta.sum() / mask_sum if mask_sum > 0 else delta.sum() * 0
    lo, hi = 1 - cfg.epsilon, 1 + cfg.epsilon_high
    level = cfg.importance_sampling_level
    if level == "sequence":
        r = torch.exp(mean_delta).expand_as(delta)
    elif level == "average":
        r = (torch.exp(delta) + torch.exp(mean_delta)) / 2
    elif level == "geometric_average":
        r = torch.exp((delta + mean_delta) / 2)
    else:
        r = torch.exp(delta)
    cap = cfg.max_negative_advantage_importance_sampling_weight
    if cap is not None:
        # The cap applies to every token, whatever the advantage's sign; a capped ratio is a constant.
        r = torch.where(r > cap, torch.full_like(r, cap).detach(), r)
    if cfg.mask_prob_ratio:
        r = torch.where((r > lo) & (r < hi), r, torch.zeros_like(r).detach())
    a = advantages - cfg.tau * delta.detach() if cfg.tau is not None else advantages
    inside = (r > lo) & (r < hi)
    if cfg.loss == "ppo":
        unclipped = r * a
        # clip(r)·A passes the gradient only strictly inside the range (a clipped ratio is constant).
        r_clipped = torch.where(inside, r, torch.clamp(r, lo, hi).detach())
        clipped = r_clipped * a
        ell = -torch.where(unclipped <= clipped, unclipped, clipped)
    else:
        # CISPO: −clip(sg(r), 1−ε, 1+ε_high)·A·lp_new.
        ell = -torch.clamp(r.detach(), lo, hi) * a * lp_new
    scale = weights / (mask_sum + 1e-6)
    loss = torch.where(m, ell * scale, torch.zeros_like(ell)).sum()
    return loss, mask_sum


def group_advantages(rewards: Sequence[float], scale_rewards: bool) -> list[float]:
    """Per-group advantages: r − mean, divided by (population std + 1e-6) when scale_rewards."""
    n = len(rewards)
    if n == 0:
        return []
    mean = sum(rewards) / n
    std = (sum((r - mean) ** 2 for r in rewards) / n) ** 0.5
    return [((r - mean) / (std + 1e-6)) if scale_rewards else (r - mean) for r in rewards]


def balance_advantage(a: float, b: float) -> float:
    """b > 0 scales negative advantages by (1 − b); b < 0 scales positive ones by (1 + b)."""
    if b > 0 and a < 0:
        return a * (1 - b)
    if b < 0 and a > 0:
        return a * (1 + b)
    return a
