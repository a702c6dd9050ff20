"""Without a server or a GPU: SFT on two CPU ranks (gloo, FSDP2) gives the same LoRA adapter as one process.

This pins the pieces that make sharded training equal single-process training: each rank trains its share of a
batch's rows, the loss is divided by the whole batch's trainable-token count, FSDP sums (not averages) the
gradients, ranks with fewer micro-batches run zero-weight passes so the collectives line up, and the sharded
LoRA weights gather back whole.
"""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path

import torch
import torch.multiprocessing as mp

from conftest import build_tiny_model

# Three rows over two ranks (2 + 1) and a small micro-batch budget: uneven shares and gradient accumulation.
EXAMPLES = [
    {"line": i + 1, "messages": [{"role": "user", "content": q}, {"role": "assistant", "content": a}]}
    for i, (q, a) in enumerate([("Sky?", "blue"), ("Sea, today, at noon?", "deep green and grey"), ("Grass?", "green"), ("Snow?", "white")])
]
CONFIG = {"batch_size": 3, "learning_rate": [1e-2, 5e-3], "epochs": 2}


class _Opts:
    micro_batch_tokens = 64

    def max_seq_len(self, model):
        return 256


class _Events:
    """The server's side of a job context: gradient_step events land in a list."""

    def __init__(self):
        self.steps: list[dict] = []

    def append_events(self, _job_id, events):
        self.steps.extend(e["data"] for e in events if e["type"] == "gradient_step")


def _train(model_dir: str, out_dir: Path, sharded: bool) -> tuple[dict[str, torch.Tensor], list[dict]]:
    """Trains; returns the saved adapter's tensors (rank 0; {} elsewhere) and the gradient_step metrics."""
    from safetensors.torch import load_file

    from tuneboard_worker import distributed
    from tuneboard_worker.model import attach_adapter, load_base, lora_settings, save_adapter
    from tuneboard_worker.runner import JobContext
    from tuneboard_worker.sft import train_sft

    device = torch.device("cpu")
    base = load_base(model_dir, "test/tiny-qwen3", device, torch.float32, None)
    torch.manual_seed(0)
    model = attach_adapter(base, lora_settings({"rank": 4, "alpha": 8, "dropout": 0.0}), None, False)
    events = _Events()
    ctx = JobContext(events, {"id": "job"}, threading.Event())
    if sharded:
        distributed.shard_model(model, device)
        ctx = distributed.LeaderContext(ctx) if distributed.rank() == 0 else distributed.FollowerContext()
    train_sft(model, base.tokenizer, {"examples": EXAMPLES, "file": "train.jsonl"}, CONFIG, ctx, device, _Opts())
    # As the runner does: every rank gathers, rank 0 writes PEFT's files.
    state = distributed.full_trainable_state(model) if sharded else None
    if distributed.rank() != 0:
        return {}, []
    save_adapter(model, "test/tiny-qwen3", out_dir, state)
    return load_file(str(out_dir / "adapter_model.safetensors")), events.steps


def _rank_main(rank: int, world: int, port: int, model_dir: str, out: str) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), WORLD_SIZE=str(world), RANK=str(rank), LOCAL_RANK=str(rank))
    torch.set_num_threads(1)
    from tuneboard_worker import distributed

    distributed.init_process_group()
    try:
        state, steps = _train(model_dir, Path(out).parent / "sharded", sharded=True)
        if rank == 0:
            torch.save({"state": state, "steps": steps}, out)
    finally:
        torch.distributed.destroy_process_group()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_cpu_ranks_train_the_same_adapter_as_one_process(models_dir: Path, tmp_path: Path):
    model_dir = str(build_tiny_model("qwen3", models_dir / "tiny-qwen3"))
    (tmp_path / "single").mkdir()
    (tmp_path / "sharded").mkdir()
    single, single_steps = _train(model_dir, tmp_path / "single", sharded=False)
    out = tmp_path / "rank0.pt"
    mp.spawn(_rank_main, args=(2, _free_port(), model_dir, str(out)), nprocs=2, join=True)
    sharded = torch.load(out)
    assert sorted(sharded["state"]) == sorted(single) and len(single) > 0
    # LoRA B starts at zero: a non-zero B shows training happened before the comparison means anything.
    assert any(float(t.abs().max()) > 0 for k, t in single.items() if "lora_B" in k)
    worst = max(float((sharded["state"][k] - t).abs().max()) for k, t in single.items())
    assert worst < 1e-4, worst
    assert len(single_steps) == 4
    assert [s["num_trainable_tokens"] for s in sharded["steps"]] == [s["num_trainable_tokens"] for s in single_steps]
    for a, b in zip(sharded["steps"], single_steps):
        assert abs(a["loss"] - b["loss"]) < 1e-4 and abs(a["grad_norm"] - b["grad_norm"]) < 1e-4
