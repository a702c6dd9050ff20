"""Helpers of the Tinker training-client tests: a client pool on the tiny Qwen3, wire tensors, datums."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from conftest import DEVICE

from tuneboard_worker.tinker.clients import ClientPool, TrainingClient
from tuneboard_worker.tinker.tensors import encode_tensor

BASE = "test/tiny-qwen3"
LORA = {"rank": 4, "alpha": 32, "seed": 0, "train_attn": True, "train_mlp": True, "train_unembed": True}


def make_pool(models_dir: Path) -> ClientPool:
    return ClientPool(DEVICE, torch.float32, models_dir, None, gradient_checkpointing=False)


def create(pool: ClientPool, model_id: str, **lora: Any) -> TrainingClient:
    return pool.create(model_id, {"base_model": BASE, "base_model_path": "tiny-qwen3", "lora": {**LORA, **lora}})


def perturb(client: TrainingClient, seed: int, scale: float = 0.05) -> None:
    """Random LoRA weights (PEFT starts B at 0, which would hide bugs in A's gradient and in the adapter's effect)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in client.params.values():
            p.copy_(torch.randn(p.shape, generator=g) * scale)


def wire(a: np.ndarray) -> dict:
    return encode_tensor(a)


def datum(tokens: np.ndarray, **inputs: np.ndarray) -> dict:
    return {"tokens": wire(np.asarray(tokens, dtype=np.int32)), "loss_fn_inputs": {k: wire(v) for k, v in inputs.items()}}


def token_rows(seed: int, lengths: list[int], vocab: int = 2000) -> list[np.ndarray]:
    """Rows of N+1 token ids: input = row[:-1], targets = row[1:]."""
    rng = np.random.default_rng(seed)
    return [rng.integers(0, vocab, n + 1).astype(np.int64) for n in lengths]
