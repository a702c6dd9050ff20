"""Room for one more training client (the poll's `accept_new`, docs/tinker.md §3.2), kept simple:

- the count: fewer than `--max-training-clients` held;
- the memory: what the device has free (CUDA: `torch.cuda.mem_get_info` plus what torch's allocator holds
  cached but unused; CPU: MemAvailable of /proc/meminfo; elsewhere unknown, and then only the count decides)
  must cover a new client's LoRA state (an estimate at rank 64 on every linear layer and the output head of the
  largest base loaded: weights, gradients and AdamW's two moments, 16 bytes per parameter in fp32) plus
  HEADROOM for the activations of a forward_backward.

The poll cannot know which base the next training client wants, so a base that is not loaded yet is checked
when its `create_model` arrives: its weights (the size of its safetensors files, scaled to the dtype it is
loaded in) plus HEADROOM must fit, else the request fails saying so (`fits_base`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch

HEADROOM = 1 << 30  # activations and temporaries of one forward_backward micro-batch, roughly
ESTIMATE_RANK = 64
BYTES_PER_LORA_PARAMETER = 16  # fp32 weight + gradient + exp_avg + exp_avg_sq


def available_bytes(device: torch.device) -> int | None:
    """Memory a new allocation can use on the device, or None when this platform does not say."""
    if device.type == "cuda":
        free, _total = torch.cuda.mem_get_info(device)
        return int(free + torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device))
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def lora_state_bytes(model: Any, rank: int = ESTIMATE_RANK) -> int:
    """The estimate of one adapter's training state on this model: rank·(in + out) per linear layer."""
    params = sum(rank * (m.in_features + m.out_features) for m in model.modules() if isinstance(m, torch.nn.Linear))
    return params * BYTES_PER_LORA_PARAMETER


def base_weight_bytes(source: str, dtype: torch.dtype, cache_dir: str | None) -> int | None:
    """The size of a base model's weights once loaded in `dtype`: its safetensors files, scaled from the dtype
    they are stored in. None when the files are not on this machine (a hub id not in the cache)."""
    folder = Path(source)
    if not folder.is_dir():
        try:
            from huggingface_hub import try_to_load_from_cache

            found = try_to_load_from_cache(source, "config.json", cache_dir=cache_dir)
        except Exception:  # noqa: BLE001 - an estimate: a cache it cannot read means "unknown"
            return None
        if not isinstance(found, str):
            return None
        folder = Path(found).parent
    files = list(folder.glob("*.safetensors"))
    if not files:
        return None
    size = sum(f.stat().st_size for f in files)
    try:
        config = json.loads((folder / "config.json").read_text())
        stored = getattr(torch, str(config.get("torch_dtype") or config.get("dtype") or "float32"))
        return int(size * torch.tensor([], dtype=dtype).element_size() / torch.tensor([], dtype=stored).element_size())
    except (OSError, ValueError, AttributeError, TypeError):
        return size


def fits_new_client(device: torch.device, loaded_models: list[Any]) -> bool:
    """Whether the memory check of `accept_new` passes (the count is checked by the caller)."""
    free = available_bytes(device)
    if free is None:
        return True
    state = max((lora_state_bytes(m) for m in loaded_models), default=0)
    return free >= state + HEADROOM


def fits_base(device: torch.device, source: str, dtype: torch.dtype, cache_dir: str | None) -> tuple[bool, int | None, int | None]:
    """(fits, bytes needed, bytes free) for loading a base model that is not loaded yet; unknown sizes fit."""
    need = base_weight_bytes(source, dtype, cache_dir)
    free = available_bytes(device)
    if need is None or free is None:
        return True, need, free
    return free >= need + HEADROOM, need + HEADROOM, free
