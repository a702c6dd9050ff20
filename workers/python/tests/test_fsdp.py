"""Without a server or a GPU: SFT and RL on two CPU ranks (gloo, FSDP2) give the same LoRA adapter as one process.

This pins the pieces that make sharded training equal single-process training: for SFT each rank trains its share
of a batch's rows, the loss is divided by the whole batch's trainable-token count, FSDP sums (not averages) the
gradients, and ranks with fewer micro-batches run zero-weight passes so the collectives line up; for RL every rank
trains each step's one row and the gradient norm is the global one, while the precalculated old logprobs are split
over the ranks (each row runs forward on one rank) and exchanged; and the sharded LoRA weights gather back whole.
"""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path

import torch
import torch.multiprocessing as mp

from conftest import RL_CONFIG_DEFAULTS, build_tiny_model

# Three rows over two ranks (2 + 1) and a small micro-batch budget: uneven shares and gradient accumulation.
EXAMPLES = [
    {"line": i + 1, "messages": [{"role": "user", "content": q}, {"role": "assistant", "content": a}]}
    for i, (q, a) in enumerate([("Sky?", "blue"), ("Sea, today, at noon?", "deep green and grey"), ("Grass?", "green"), ("Snow?", "white")])
]
CONFIG = {"batch_size": 3, "learning_rate": [1e-2, 5e-3], "epochs": 2}


def _trajectory(question: str, answer: str, reward: float) -> dict:
    return {"messages_and_choices": [{"role": "user", "content": question}, {"role": "assistant", "content": answer}], "reward": reward}


# Three groups (an odd number, as ranks would split rows), one without a reward spread (nothing to train there).
RL_GROUPS = [
    {"trajectories": [_trajectory("Sky?", "blue", 1.0), _trajectory("Sky?", "green", 0.0)]},
    {"trajectories": [_trajectory("Sea?", "deep green and grey", 0.2), _trajectory("Sea?", "salt", 0.9), _trajectory("Sea?", "wet", 0.5)]},
    {"trajectories": [_trajectory("Grass?", "green", 0.5), _trajectory("Grass?", "green", 0.5)]},
]
# resolveRlConfig's defaults, trained on text alone, old logprobs from the adapter.
RL_CONFIG = {**RL_CONFIG_DEFAULTS, "precalculate_logprobs": True, "allow_training_without_logprobs": True}


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


def _train(model_dir: str, out_dir: Path, sharded: bool, kind: str = "sft") -> tuple[dict[str, torch.Tensor], list[dict]]:
    """Trains; returns the saved adapter's tensors (rank 0; {} elsewhere) and the gradient_step metrics."""
    from safetensors.torch import load_file

    from tuneboard_worker import distributed
    from tuneboard_worker.model import attach_adapter, detach_adapter, load_base, lora_settings, save_adapter
    from tuneboard_worker.rl import train_rl
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
    if kind == "sft":
        train_sft(model, base.tokenizer, {"examples": EXAMPLES, "file": "train.jsonl"}, CONFIG, ctx, device, _Opts())
    else:
        train_rl(model, base.tokenizer, {"trajectory_groups": RL_GROUPS}, RL_CONFIG, ctx, device, _Opts())
    # As the runner does: every rank gathers, rank 0 writes PEFT's files.
    state = distributed.full_trainable_state(model) if sharded else None
    if distributed.rank() != 0:
        return {}, []
    save_adapter(model, "test/tiny-qwen3", out_dir, state)
    if not sharded:
        detach_adapter(model)  # the base stays cached for the next test, as the runner leaves it
    return load_file(str(out_dir / "adapter_model.safetensors")), events.steps


def _rank_main(rank: int, world: int, port: int, model_dir: str, out: str, kind: str = "sft") -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), WORLD_SIZE=str(world), RANK=str(rank), LOCAL_RANK=str(rank))
    torch.set_num_threads(1)
    from tuneboard_worker import distributed

    distributed.init_process_group("cpu")  # gloo on CPU, also on a machine with GPUs
    try:
        state, steps = _train(model_dir, Path(out).parent / "sharded", sharded=True, kind=kind)
        if rank == 0:
            torch.save({"state": state, "steps": steps}, out)
    finally:
        distributed.close()


def _on_two_ranks(fn, *args) -> None:
    """Runs fn(rank, 2, free port, *args) in two processes, as torchrun would. Forked, not spawned: a spawned rank
    imported torch, transformers and peft again (about 6 s of CPU each, 8 ranks in this file), and this file took 83 s
    instead of 47. Each rank still sets up its own process group, as under torchrun."""
    mp.start_processes(fn, args=(2, _free_port(), *args), nprocs=2, join=True, start_method="fork")


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
    _on_two_ranks(_rank_main, model_dir, str(out))
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


def test_rl_on_two_cpu_ranks_trains_the_same_adapter_as_one_process(models_dir: Path, tmp_path: Path):
    model_dir = str(build_tiny_model("qwen3", models_dir / "tiny-qwen3"))
    (tmp_path / "single").mkdir()
    (tmp_path / "sharded").mkdir()
    single, single_steps = _train(model_dir, tmp_path / "single", sharded=False, kind="rl")
    out = tmp_path / "rank0.pt"
    _on_two_ranks(_rank_main, model_dir, str(out), "rl")
    sharded = torch.load(out)
    assert sorted(sharded["state"]) == sorted(single) and len(single) > 0
    assert any(float(t.abs().max()) > 0 for k, t in single.items() if "lora_B" in k)
    worst = max(float((sharded["state"][k] - t).abs().max()) for k, t in single.items())
    assert worst < 1e-4, worst
    # 5 trajectories with a non-zero advantage (the tied group trains nothing): 5 rows, 5 steps.
    assert len(single_steps) == 5 and len(sharded["steps"]) == 5
    for a, b in zip(sharded["steps"], single_steps):
        assert a["num_trainable_tokens"] == b["num_trainable_tokens"]
        assert a["num_groups_trainable"] == b["num_groups_trainable"] == 2
        for key in ("loss", "grad_norm", "entropy"):
            assert abs(a[key] - b[key]) < 1e-4, (key, a[key], b[key])


def _precalculate(model_dir: str, sharded: bool) -> tuple[list[list[float]], list[int], list[int]]:
    """The RL batch's precalculated old logprobs, the lengths of the sequences this rank ran forward, and the rows'
    lengths."""
    from tuneboard_worker import distributed, rl
    from tuneboard_worker.model import attach_adapter, detach_adapter, load_base, lora_settings
    from tuneboard_worker.runner import JobContext

    device = torch.device("cpu")
    base = load_base(model_dir, "test/tiny-qwen3", device, torch.float32, None)
    torch.manual_seed(0)
    model = attach_adapter(base, lora_settings({"rank": 4, "alpha": 8, "dropout": 0.0}), None, False)
    ctx = JobContext(_Events(), {"id": "job"}, threading.Event())
    if sharded:
        distributed.shard_model(model, device)
        ctx = distributed.LeaderContext(ctx) if distributed.rank() == 0 else distributed.FollowerContext()
    tensors = rl.row_tensors(rl.prepare_rl_batch(RL_GROUPS, base.tokenizer, RL_CONFIG, 256)["rows"], True)
    ran: list[int] = []
    forward = rl.sequence_logprobs

    def counting(model, rows, device, **kw):
        ran.extend(len(r) for r in rows)
        return forward(model, rows, device, **kw)

    rl.sequence_logprobs = counting
    try:
        rl.precalculate_old_logprobs(model, tensors, ctx, device)
    finally:
        rl.sequence_logprobs = forward
        if not sharded:
            detach_adapter(model)
    return [t["old_logprobs"] for t in tensors], ran, [len(t["row"]["ids"]) for t in tensors]


def _precalculate_main(rank: int, world: int, port: int, model_dir: str, out_dir: str) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), WORLD_SIZE=str(world), RANK=str(rank), LOCAL_RANK=str(rank))
    torch.set_num_threads(1)
    from tuneboard_worker import distributed

    distributed.init_process_group("cpu")  # gloo on CPU, also on a machine with GPUs
    try:
        torch.save(_precalculate(model_dir, sharded=True), Path(out_dir) / f"rank{rank}.pt")
    finally:
        distributed.close()


def test_rl_precalculated_logprobs_are_shared_out_over_the_ranks(models_dir: Path, tmp_path: Path):
    model_dir = str(build_tiny_model("qwen3", models_dir / "tiny-qwen3"))
    single, single_ran, lengths = _precalculate(model_dir, sharded=False)
    assert len(lengths) == 5 and single_ran == lengths
    _on_two_ranks(_precalculate_main, model_dir, str(tmp_path))
    ranks = [torch.load(tmp_path / f"rank{r}.pt") for r in range(2)]
    # 5 rows over 2 ranks: rank 0 runs rows 0, 2, 4; rank 1 rows 1, 3 and a two-token pass to keep the
    # collectives in step. Each row runs forward once in all, not once per rank.
    assert ranks[0][1] == [lengths[0], lengths[2], lengths[4]]
    assert ranks[1][1] == [lengths[1], lengths[3], 2]
    for old, _, _ in ranks:
        assert [len(lp) for lp in old] == [n - 1 for n in lengths]
        worst = max(abs(a - b) for row, ref in zip(old, single) for a, b in zip(row, ref))
        assert worst < 1e-5, worst
    # Distinct rows have distinct logprobs, so a row given another's lp_old would not pass the check above.
    assert len({tuple(lp) for lp in single}) == 5


class _StubServer:
    """Rank 0's client: an SFT job the user cancels while it trains, an SFT job, then an RL job, then nothing."""

    def __init__(self, model_dir: str):
        job = {"backend": "hf", "base_model": "test/tiny-qwen3", "base_model_path": model_dir, "lease_seconds": 60}
        self.jobs = [
            {**job, "id": "cancel", "kind": "sft", "config": {**CONFIG, "epochs": 500}},
            {**job, "id": "sft", "kind": "sft", "config": {**CONFIG, "lora": {"rank": 4, "alpha": 8}}},
            {**job, "id": "rl", "kind": "rl", "config": RL_CONFIG},
        ]
        self.calls: list[tuple] = []

    def claim(self, kinds, *_args, **_kw):
        self.claimed_kinds = kinds
        return self.jobs.pop(0) if self.jobs else None

    def heartbeat(self, job_id, *_args):
        return job_id == "cancel"

    def append_events(self, job_id, events):
        self.calls += [("event", job_id, e["type"]) for e in events]

    def job_input(self, job_id):
        return {"trajectory_groups": RL_GROUPS} if job_id == "rl" else {"examples": EXAMPLES, "file": "train.jsonl"}

    def base_weights(self, *_args):
        return None

    def upload(self, job_id, file, data):
        self.calls.append(("upload", job_id, file, len(data)))
        return "key"

    def complete(self, job_id, _key, _metrics):
        self.calls.append(("complete", job_id))

    def fail(self, job_id, message):
        self.calls.append(("fail", job_id, message))

    def sign_off(self):
        self.calls.append(("sign_off", ""))
        return True

    def close(self):
        pass


def _worker_main(rank: int, world: int, port: int, model_dir: str, out: str) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), WORLD_SIZE=str(world), RANK=str(rank), LOCAL_RANK=str(rank))
    torch.set_num_threads(1)
    from tuneboard_worker.runner import Options, Worker

    stub = _StubServer(model_dir) if rank == 0 else None
    # device cpu: gloo ranks on the CPU, also where there are GPUs (scripts/device-check.sh runs this file on one).
    opts = Options(server_url="http://unused", token="t", worker_id="w", device="cpu", exit_when_idle=0.2, micro_batch_tokens=64, heartbeat_seconds=0.3)
    worker = Worker(opts, client=stub)
    worker.run()  # ranks > 0 never touch their client
    # Every rank leaves the process group itself (not at interpreter exit, where gloo's threads can abort it).
    assert not torch.distributed.is_initialized()
    if stub:
        torch.save({"calls": stub.calls, "kinds": stub.claimed_kinds, "tinker": worker.tinker is not None}, out)


def test_under_torchrun_rank_0_alone_talks_to_the_server_and_every_rank_trains(models_dir: Path, tmp_path: Path):
    model_dir = str(build_tiny_model("qwen3", models_dir / "tiny-qwen3"))
    out = tmp_path / "calls.pt"
    _on_two_ranks(_worker_main, model_dir, str(out))
    got = torch.load(out)
    assert set(got["kinds"]) == {"sft", "rl"}  # claims both kinds
    assert not got["tinker"]  # Tinker training clients (on by default) are off under torchrun
    sft = [c for c in got["calls"] if c[1] == "sft"]
    assert [c[2] for c in sft if c[0] == "event"] == ["training_started"] + ["gradient_step"] * 4
    assert [c[2] for c in sft if c[0] == "upload"] == ["adapter_config.json", "adapter_model.safetensors"]
    assert sft[-1] == ("complete", "sft")
    # The cancel reached every rank at the same step (the next jobs ran on ranks still in step): no upload.
    cancelled = [c for c in got["calls"] if c[1] == "cancel"]
    assert 0 < len(cancelled) < 1000 and all(c[0] == "event" for c in cancelled)
    rl = [c for c in got["calls"] if c[1] == "rl"]
    assert [c[2] for c in rl if c[0] == "event"] == ["training_started"] + ["gradient_step"] * 5
    assert [c[2] for c in rl if c[0] == "upload"] == ["adapter_config.json", "adapter_model.safetensors"]
    assert rl[-1] == ("complete", "rl")
