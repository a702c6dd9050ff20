"""The arithmetic of scripts/device-check.sh's figures (tuneboard_worker/device_check.py): which bf16 peak a GPU's
name gives, and model FLOPs utilisation. The training itself runs in CI through the script's CPU quick mode."""

from __future__ import annotations

import pytest
import torch

from tuneboard_worker import device_check


@pytest.mark.parametrize(
    "name, tflops",
    [
        ("NVIDIA H100 80GB HBM3", 989.0),
        ("NVIDIA H100 PCIe", 756.0),  # before plain "H100", which would match it too
        ("NVIDIA H100 NVL", 835.0),
        ("NVIDIA H200", 989.0),
        ("NVIDIA A100-SXM4-80GB", 312.0),
        ("NVIDIA L4", None),
    ],
)
def test_the_bf16_peak_comes_from_the_device_name(monkeypatch, name, tflops):
    monkeypatch.delenv("TUNEBOARD_PEAK_TFLOPS", raising=False)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda _device=None: name)
    peak, label = device_check.peak_bf16_flops(torch.device("cuda", 0))
    assert peak == (None if tflops is None else tflops * 1e12)
    assert name in label  # the summary says which value was used, for which device


def test_a_cpu_has_no_peak_unless_one_is_given(monkeypatch):
    monkeypatch.delenv("TUNEBOARD_PEAK_TFLOPS", raising=False)
    assert device_check.peak_bf16_flops(torch.device("cpu"))[0] is None
    monkeypatch.setenv("TUNEBOARD_PEAK_TFLOPS", "2.5")
    assert device_check.peak_bf16_flops(torch.device("cpu")) == (2.5e12, "2.5 TFLOPS (TUNEBOARD_PEAK_TFLOPS)")


def test_mfu_is_six_n_tokens_per_second_over_the_peak_of_every_gpu():
    # 494M parameters at 100k tokens/s: 2.964e14 FLOP/s, 30 % of 989 TFLOPS, 15 % of two such GPUs.
    assert device_check.mfu(494_000_000, 100_000, 989e12) == pytest.approx(0.29970, abs=1e-5)
    assert device_check.mfu(494_000_000, 100_000, 989e12, gpus=2) == pytest.approx(0.14985, abs=1e-5)
    assert device_check.mfu(494_000_000, 100_000, None) is None
