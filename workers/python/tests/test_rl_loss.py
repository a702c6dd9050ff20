"""The PyTorch RL objective against vectors written by the TypeScript engine (tests/fixtures/rl-loss-vectors.json)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch

from tuneboard_worker.rl import row_tensors
from tuneboard_worker.rl_loss import LossConfig, balance_advantage, group_advantages, rl_row_loss

FIXTURE = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "rl-loss-vectors.json"
VECTORS = json.loads(FIXTURE.read_text())


def nan(xs):
    return [math.nan if x is None else x for x in xs]


@pytest.mark.parametrize("case", VECTORS["row_loss"], ids=lambda c: "-".join(f"{v}" for v in c["config"].values()))
def test_row_loss_and_gradient_match_typescript(case):
    lp = torch.tensor(case["lp_new"], dtype=torch.float64, requires_grad=True)
    t = lambda k: torch.tensor(nan(case[k]), dtype=torch.float64)  # noqa: E731
    loss, masked = rl_row_loss(lp, t("mask"), t("old_logprobs"), t("weights"), t("advantages"), LossConfig.from_config(case["config"]))
    loss.backward()
    assert masked == case["expected"]["masked_tokens"]
    assert loss.item() == pytest.approx(case["expected"]["loss"], rel=1e-9, abs=1e-12)
    assert lp.grad.tolist() == pytest.approx(nan(case["expected"]["grad"]), rel=1e-9, abs=1e-12)


def test_group_and_balanced_advantages_match_typescript():
    for case in VECTORS["group_advantages"]:
        assert group_advantages(case["rewards"], case["scale_rewards"]) == pytest.approx(case["expected"], rel=1e-9, abs=1e-12)
    for case in VECTORS["balance_advantage"]:
        assert balance_advantage(case["a"], case["b"]) == pytest.approx(case["expected"], abs=1e-12)


def test_batch_weight_and_advantage_normalisation_match_typescript():
    for case in VECTORS["row_tensors"]:
        rows = [
            {"trajectory": r["trajectory"], "ids": r["ids"], "mask": r["mask"], "old_logprobs": nan(r["old_logprobs"]), "advantage": r["advantage"]}
            for r in case["rows"]
        ]
        got = row_tensors(rows, case["allow_training_without_logprobs"])
        assert len(got) == len(case["expected"])
        for g, e in zip(got, case["expected"]):
            assert g["mask"] == e["mask"]
            assert g["weights"] == pytest.approx(e["weights"], rel=1e-9)
            assert g["advantages"] == pytest.approx(e["advantages"], rel=1e-9)
            assert g["old_logprobs"] == pytest.approx(nan(e["old_logprobs"]), nan_ok=True)
