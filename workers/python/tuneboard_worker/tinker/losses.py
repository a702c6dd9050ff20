"""The loss functions of docs/tinker.md §2.4, the checks of their inputs, and the dashboard's statistics (§3.2).

Each datum's loss is the SUM over its tokens of a per-token term (and a call's loss the sum over its datums),
never normalised, as the SDK documents: `lp[t]` is the training model's log-probability of `target_tokens[t]`.

| loss                | per-token term                                              |
| ------------------- | ----------------------------------------------------------- |
| cross_entropy       | −w·lp                                                        |
| importance_sampling | −r·A, r = exp(lp − logprobs)                                 |
| ppo                 | −min(r·A, clip(r, lo, hi)·A)                                 |
| cispo               | −sg(clip(r, lo, hi))·A·lp                                    |
| dro                 | −(lp·A − ½·β·(lp − logprobs)²)                               |

`weights`, when given to an RL loss, multiply each token's term.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from .errors import user_error

RL_INPUTS = ("target_tokens", "logprobs", "advantages")


@dataclass(frozen=True)
class LossFn:
    name: str
    required: tuple[str, ...]
    optional: tuple[str, ...]
    # loss_fn_config keys and their defaults (docs/tinker.md §2.4).
    defaults: dict[str, float] = field(default_factory=dict)

    @property
    def rl(self) -> bool:
        return self.name != "cross_entropy"

    @property
    def clips(self) -> bool:
        return self.name in ("ppo", "cispo")


LOSS_FNS: dict[str, LossFn] = {
    "cross_entropy": LossFn("cross_entropy", ("target_tokens",), ("weights",)),
    "importance_sampling": LossFn("importance_sampling", RL_INPUTS, ("weights",)),
    "ppo": LossFn(
        "ppo",
        RL_INPUTS,
        ("weights", "clip_low_threshold", "clip_high_threshold"),
        {"clip_low_threshold": 0.8, "clip_high_threshold": 1.2},
    ),
    "cispo": LossFn(
        "cispo",
        RL_INPUTS,
        ("weights", "clip_low_threshold", "clip_high_threshold"),
        {"clip_low_threshold": 0.0, "clip_high_threshold": 4.0},
    ),
    "dro": LossFn("dro", RL_INPUTS, ("weights",), {"beta": 0.05}),
}


@dataclass(frozen=True)
class Loss:
    """A loss function with its loss_fn_config resolved (config over defaults)."""

    fn: LossFn
    config: dict[str, float]


def resolve_loss(name: Any, config: Any) -> Loss:
    fn = LOSS_FNS.get(name) if isinstance(name, str) else None
    if fn is None:
        raise user_error(f"unknown loss_fn {name!r}: use one of {', '.join(LOSS_FNS)}")
    given = config or {}
    if not isinstance(given, dict):
        raise user_error(f"loss_fn_config must be an object of numbers, not {type(given).__name__}")
    unknown = sorted(set(given) - set(fn.defaults))
    if unknown:
        accepted = ", ".join(fn.defaults) or "none"
        raise user_error(f"loss_fn_config keys {', '.join(map(repr, unknown))} do not apply to {fn.name} (it takes: {accepted})")
    values: dict[str, float] = {}
    for key, default in fn.defaults.items():
        v = given.get(key, default)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or math.isnan(v):
            raise user_error(f"loss_fn_config {key} must be a number, not {v!r}")
        values[key] = float(v)
    if fn.clips and values["clip_low_threshold"] > values["clip_high_threshold"]:
        raise user_error(
            f"loss_fn_config clip_low_threshold ({values['clip_low_threshold']}) is above clip_high_threshold "
            f"({values['clip_high_threshold']})"
        )
    return Loss(fn, values)


def check_inputs(loss: Loss, index: int, n: int, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The datum's loss_fn_inputs checked against the loss (names, shapes, finite values): target_tokens as int64,
    the others as float32. Raises a user error naming the datum and the input."""
    fn = loss.fn
    missing = [k for k in fn.required if k not in inputs]
    if missing:
        raise user_error(f"datum {index}: {fn.name} needs loss_fn_inputs {', '.join(missing)}")
    unknown = sorted(set(inputs) - set(fn.required) - set(fn.optional))
    if unknown:
        raise user_error(
            f"datum {index}: loss_fn_inputs {', '.join(unknown)} are not inputs of {fn.name} "
            f"(it takes {', '.join(fn.required + fn.optional)})"
        )
    targets = inputs["target_tokens"]
    if targets.dtype.kind not in "iu":
        raise user_error(f"datum {index}: target_tokens must be integers, not {targets.dtype.name}")
    # (N,) or, for cross_entropy's K weighted targets per position, (N, K) (docs/tinker.md §2.4).
    allowed_dims = (1, 2) if fn.name == "cross_entropy" else (1,)
    if targets.ndim not in allowed_dims or targets.shape[0] != n:
        want = "(N,) or (N, K)" if fn.name == "cross_entropy" else "(N,)"
        raise user_error(f"datum {index}: target_tokens has shape {list(targets.shape)}; {fn.name} needs {want} with N = {n}, the number of input tokens")
    out = {"target_tokens": targets.astype(np.int64)}
    for key, value in inputs.items():
        if key == "target_tokens":
            continue
        if value.shape != targets.shape:
            raise user_error(f"datum {index}: {key} has shape {list(value.shape)}, target_tokens {list(targets.shape)}: they must be equal")
        value = value.astype(np.float32)
        # Thresholds may be infinite (no clipping on that side); nothing may be NaN, and the others must be
        # finite: one NaN would make the whole accumulated gradient NaN.
        bad = np.isnan(value) if key.startswith("clip_") else ~np.isfinite(value)
        if bad.any():
            at = tuple(int(i) for i in np.argwhere(bad)[0])
            raise user_error(f"datum {index}: {key} at position {at[0]} is {value[at]}, not a finite number")
        out[key] = value
    if "clip_low_threshold" in out and "clip_high_threshold" in out:
        above = out["clip_low_threshold"] > out["clip_high_threshold"]
        if above.any():
            t = int(np.argwhere(above)[0][0])
            raise user_error(f"datum {index}: clip_low_threshold is above clip_high_threshold at position {t}")
    return out


def token_terms(loss: Loss, lp: torch.Tensor, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
    """The per-token terms of one datum (the shape of lp); their sum is the datum's loss."""
    w = inputs.get("weights")
    if loss.fn.name == "cross_entropy":
        return -lp if w is None else -w * lp
    adv, sampled = inputs["advantages"], inputs["logprobs"]
    ratio = torch.exp(lp - sampled)
    name = loss.fn.name
    if name == "importance_sampling":
        terms = -ratio * adv
    elif name == "dro":
        terms = -(lp * adv - 0.5 * loss.config["beta"] * (lp - sampled) ** 2)
    else:
        lo, hi = clip_bounds(loss, inputs, lp)
        clipped = torch.clamp(ratio, lo, hi)
        if name == "ppo":
            terms = -torch.minimum(ratio * adv, clipped * adv)
        else:  # cispo: the clipped ratio is a constant weight of the policy-gradient term
            terms = -clipped.detach() * adv * lp
    return terms if w is None else terms * w


def clip_bounds(loss: Loss, inputs: dict[str, torch.Tensor], like: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-token (lo, hi): a loss_fn_inputs tensor wins over loss_fn_config, which wins over the default (docs/tinker.md §2.4)."""

    def bound(key: str) -> torch.Tensor:
        t = inputs.get(key)
        return t if t is not None else torch.full_like(like, loss.config[key])

    return bound("clip_low_threshold"), bound("clip_high_threshold")


class Stats:
    """The dashboard's statistics of one forward/forward_backward call (docs/tinker.md §3.2), over its loss tokens:
    positions whose term is not identically zero (weight ≠ 0 for cross_entropy; advantage ≠ 0, and weight ≠ 0
    when weights are given, for RL losses). A position of (N, K) targets counts once."""

    def __init__(self, loss: Loss):
        self.loss = loss
        self.sequences = 0
        self.tokens = 0
        self.loss_tokens = 0
        self.loss_sum = 0.0
        self.ratio_sum = 0.0
        self.clipped = 0
        self.kl_sum = 0.0
        self.advantage_sum = 0.0
        self.weight_sum = 0.0

    @torch.no_grad()
    def add(self, lp: torch.Tensor, inputs: dict[str, torch.Tensor], datum_loss: float) -> None:
        self.sequences += 1
        self.tokens += lp.shape[0]
        self.loss_sum += datum_loss
        w = inputs.get("weights")
        if not self.loss.fn.rl:
            mask = torch.ones_like(lp, dtype=torch.bool) if w is None else w != 0
            self.loss_tokens += int(mask.reshape(lp.shape[0], -1).any(-1).sum())
            # Σ|w|: the loss per unit of weight is the weighted mean NLL whatever the weights sum to per example
            # (tinker-cookbook's sum to 1 per sequence, so per token the loss would read 15× too small).
            self.weight_sum += float(lp.numel()) if w is None else float(w.abs().sum())
            return
        adv, sampled = inputs["advantages"], inputs["logprobs"]
        mask = adv != 0 if w is None else (adv != 0) & (w != 0)
        self.loss_tokens += int(mask.sum())
        ratio = torch.exp(lp - sampled)[mask]
        self.ratio_sum += float(ratio.sum())
        self.kl_sum += float((sampled - lp)[mask].sum())
        self.advantage_sum += float(adv[mask].sum())
        if self.loss.fn.clips:
            lo, hi = clip_bounds(self.loss, inputs, lp)
            self.clipped += int(((ratio < lo[mask]) | (ratio > hi[mask])).sum())

    def as_dict(self) -> dict[str, float]:
        n = self.loss_tokens
        out = {
            "num_sequences": float(self.sequences),
            "num_tokens": float(self.tokens),
            "num_loss_tokens": float(n),
            "loss_sum": self.loss_sum,
        }
        if not self.loss.fn.rl:
            out["weight_sum"] = self.weight_sum
        if self.loss.fn.rl:
            mean = (lambda s: s / n) if n else (lambda s: 0.0)
            out.update(ratio_mean=mean(self.ratio_sum), kl_sample_train=mean(self.kl_sum), advantage_mean=mean(self.advantage_sum))
            if self.loss.fn.clips:
                out["clip_fraction"] = mean(float(self.clipped))
        return out
