"""Training one job across the GPUs of one machine (FSDP2) when the worker runs under torchrun.

Rank 0 is the only process that talks to the server; it broadcasts each job (with its input and previous
adapter) to the other ranks, and a stop/cancel flag at every step, so that every rank runs the same collectives
in the same order. Every rank trains its share of each batch's rows on its shard of the model.
"""

from __future__ import annotations

import os
from typing import Any

import torch
import torch.distributed as dist


def world_size() -> int:
    return dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1


def rank() -> int:
    return dist.get_rank() if dist.is_available() and dist.is_initialized() else 0


def launched_distributed() -> bool:
    """torchrun (and accelerate launch) set WORLD_SIZE; one process is the ordinary worker."""
    return int(os.environ.get("WORLD_SIZE", "1")) > 1


def init_process_group(device: str = "auto") -> torch.device:
    """nccl with one GPU per rank (LOCAL_RANK) where CUDA is present, else gloo on CPU. device "cpu" (the worker's
    --device cpu) is gloo on CPU even where there are GPUs: ranks that should train on the CPU must not claim one
    GPU each, and a machine with one GPU has none for rank 1 (torch.cuda.set_device(1) fails)."""
    local = int(os.environ.get("LOCAL_RANK", "0"))
    if device != "cpu" and torch.cuda.is_available():
        torch.cuda.set_device(local)
        device = torch.device("cuda", local)
        backend = "nccl"
    else:
        device = torch.device("cpu")
        backend = "gloo"
    if not dist.is_initialized():
        dist.init_process_group(backend=backend)
    return device


def close(together: bool = True) -> None:
    """Leaves the process group. `together` (a clean exit, every rank on its way out): a barrier first, which keeps
    a rank from closing its connections while a peer is still in a collective with it. Not after a failure, when
    a peer may be gone and the barrier would wait for it until the group's timeout. destroy_process_group joins
    the backend's threads, which otherwise die with the interpreter and can abort the process on its way out
    ("terminate called without an active exception"). A no-op outside a process group, and when called twice."""
    if not (dist.is_available() and dist.is_initialized()):
        return
    try:
        if together:
            dist.barrier()
    finally:
        dist.destroy_process_group()


def broadcast(obj: Any) -> Any:
    """Rank 0's object on every rank (pickled; fine for job inputs and adapter bytes, not for tensors of weights)."""
    box = [obj if rank() == 0 else None]
    dist.broadcast_object_list(box, src=0)
    return box[0]


def shard_model(peft_model: Any, device: torch.device) -> Any:
    """FSDP2 over every decoder layer, then the root (embeddings, norm, head). The frozen base weights and the
    LoRA weights share a layer's shard; only the LoRA ones get gradients. fully_shard moves the shards onto the
    mesh's device, so the model can be loaded on CPU and no GPU ever holds all of it."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    mesh = init_device_mesh(device.type, (world_size(),))
    layers = _decoder_layers(peft_model)
    for layer in layers:
        fully_shard(layer, mesh=mesh)
    fully_shard(peft_model, mesh=mesh)
    return peft_model


def _decoder_layers(peft_model: Any) -> list[Any]:
    inner = peft_model.get_base_model() if hasattr(peft_model, "get_base_model") else peft_model
    for path in ("model.layers", "transformer.h", "model.decoder.layers"):
        obj = inner
        try:
            for part in path.split("."):
                obj = getattr(obj, part)
        except AttributeError:
            continue
        return list(obj)
    raise RuntimeError(f"FSDP: no decoder layers found in {type(inner).__name__}")


def full_trainable_state(peft_model: Any) -> dict[str, torch.Tensor]:
    """The trainable (LoRA) parameters, gathered whole on every rank (a collective: all ranks call it), on CPU."""
    out: dict[str, torch.Tensor] = {}
    for name, p in peft_model.named_parameters():
        if not p.requires_grad:
            continue
        t = p.detach()
        if hasattr(t, "full_tensor"):
            t = t.full_tensor()
        out[name] = t.cpu().clone()
    return out


def all_reduce_sum(values: list[float], device: torch.device) -> list[float]:
    t = torch.tensor(values, dtype=torch.float64, device=device)
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    return t.tolist()


def all_reduce_max(value: int, device: torch.device) -> int:
    t = torch.tensor([value], dtype=torch.int64, device=device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return int(t.item())


class LeaderContext:
    """Rank 0's job context: the ordinary one, plus the stop/cancel verdict broadcast at every check."""

    def __init__(self, inner: Any):
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    @property
    def extras(self) -> dict[str, float]:
        return self.inner.extras

    @extras.setter
    def extras(self, value: dict[str, float]) -> None:
        self.inner.extras = value

    def check(self) -> None:
        from .runner import Cancelled, Stopped

        verdict = "cancelled" if self.inner.cancelled.is_set() else "stopped" if self.inner.stop_now.is_set() else None
        broadcast(verdict)
        if verdict == "cancelled":
            raise Cancelled()
        if verdict == "stopped":
            raise Stopped()

    def started(self, num_sequences: int) -> None:
        self.inner.started(num_sequences)

    def step(self, metrics: dict[str, float]) -> None:
        # One broadcast check per step, as the followers do; the inner step's own check would not be shared.
        self.check()
        self.inner.client.append_events(self.inner.job["id"], [{"type": "gradient_step", "data": self.inner.step_data(metrics)}])
        self.inner.steps += 1


class FollowerContext:
    """Ranks > 0: no server; the stop/cancel verdict comes from rank 0."""

    def __init__(self) -> None:
        self.extras: dict[str, float] = {}
        self.started_sent = False
        self.steps = 0

    def check(self) -> None:
        from .runner import Cancelled, Stopped

        verdict = broadcast(None)
        if verdict == "cancelled":
            raise Cancelled()
        if verdict == "stopped":
            raise Stopped()

    def started(self, num_sequences: int) -> None:
        self.started_sent = True

    def step(self, metrics: dict[str, float]) -> None:
        self.check()
        self.steps += 1
