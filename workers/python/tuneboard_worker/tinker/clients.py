"""Training clients and the base models they share (docs/tinker.md §3).

A base model is loaded once per worker however many training clients use it: the first client wraps it in a
PeftModel, each client is one named LoRA adapter on it (`add_adapter`), and a request runs with its client's
adapter active (`set_adapter`). PEFT's `set_adapter` makes the active adapter's LoRA parameters require grad and
freezes every other adapter's, and a LoRA layer skips adapters that are not active (in a layer that one client
targets and another does not, the other sees the base layer alone), so one client's forward_backward can neither
use nor change another's weights or gradients; each client's AdamW holds its own parameters only.

When the last client of a base is freed, the PEFT wrapping is removed (model.py's `detach_adapter`), so the job
path, which keeps the last base it loaded in model.py's cache, finds a clean model. The worker never runs a job
while it holds training clients (runner.py), so the two never use one base at once.
"""

from __future__ import annotations

import gc
import json
import os
import re
import warnings
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from ..model import (
    LoadedBase,
    TrainingError,
    cached_base,
    detach_adapter,
    drop_cache,
    enable_gradient_checkpointing,
    load_base,
    resolve_model_source,
)
from . import memory
from .errors import server_error, user_error

# Linear layers that route tokens to experts rather than transform them (MoE routers): never LoRA targets.
ROUTER_NAMES = {"gate", "router", "shared_expert_gate"}
# How many answers a client remembers for re-deliveries (docs/tinker.md §3.3). The server hands a client's next request only once
# the previous one has a result, so only the latest can come again; a few more cost little.
ANSWERS_KEPT = 4
# PEFT warns that a LoRA on an output head tied to the input embeddings complicates merging it into the weights.
# Nothing here merges: the LoRA adds its delta to the output projection alone, which is what train_unembed means.
_TIED_WARNINGS = (r".*tie_word_embeddings=True.*",)


@dataclass(frozen=True)
class LoraSpec:
    """The `lora` of a create_model payload (docs/tinker.md §2.7)."""

    rank: int
    alpha: float
    seed: int | None
    train_attn: bool
    train_mlp: bool
    train_unembed: bool

    @staticmethod
    def from_payload(lora: Any) -> "LoraSpec":
        if not isinstance(lora, dict):
            raise user_error("create_model needs a lora object (rank, alpha, seed, train_attn, train_mlp, train_unembed)")

        def integer(key: str, value: Any) -> int:
            if isinstance(value, bool) or not isinstance(value, int):
                raise user_error(f"lora {key} must be an integer, not {value!r}")
            return value

        rank = integer("rank", lora.get("rank", 32))
        if rank < 1:
            raise user_error(f"lora rank must be at least 1, not {rank}")
        alpha = lora.get("alpha", 32)
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not alpha > 0:
            raise user_error(f"lora alpha must be a positive number, not {alpha!r}")
        seed = lora.get("seed")
        flags = {k: lora.get(k, True) for k in ("train_attn", "train_mlp", "train_unembed")}
        for k, v in flags.items():
            if not isinstance(v, bool):
                raise user_error(f"lora {k} must be true or false, not {v!r}")
        if not any(flags.values()):
            raise user_error("train_attn, train_mlp and train_unembed are all false: the training client would train nothing")
        return LoraSpec(rank, float(alpha), None if seed is None else integer("seed", seed), **flags)


@dataclass
class TargetGroups:
    """The LoRA target names of a base model, by what they are (docs/tinker.md §2.7): found from its Linear layers' paths."""

    attn: list[str]
    mlp: list[str]
    unembed: str | None

    @staticmethod
    def of(model: Any) -> "TargetGroups":
        head = model.get_output_embeddings()
        attn: dict[str, None] = {}
        mlp: dict[str, None] = {}
        head_name = None
        for name, module in model.named_modules():
            if module is head:
                head_name = name
                continue
            if not isinstance(module, torch.nn.Linear):
                continue
            *path, leaf = name.split(".")
            if leaf in ROUTER_NAMES:
                continue
            if any("attn" in p or "attention" in p for p in path):
                attn[leaf] = None
            elif any("mlp" in p or p in ("feed_forward", "ffn", "experts") for p in path):
                mlp[leaf] = None
        return TargetGroups(list(attn), list(mlp), head_name if isinstance(head, torch.nn.Linear) else None)

    def select(self, lora: LoraSpec, base_model: str) -> list[str]:
        """PEFT's target_modules for these settings, in a stable order (attention, MLP, head). PEFT matches a name
        to every module whose path ends with it, so a name both groups use cannot train one without the other."""
        shared = set(self.attn) & set(self.mlp)
        if shared and lora.train_attn != lora.train_mlp:
            raise user_error(
                f"{base_model} names attention and MLP layers alike ({', '.join(sorted(shared))}): "
                "train_attn and train_mlp must both be true or both false for it"
            )
        names: list[str] = []
        for wanted, group, what in ((lora.train_attn, self.attn, "attention"), (lora.train_mlp, self.mlp, "MLP")):
            if wanted:
                if not group:
                    raise user_error(f"{base_model} has no {what} linear layers this worker recognises: set train_{'attn' if what == 'attention' else 'mlp'} to false")
                names += [n for n in group if n not in names]
        if lora.train_unembed:
            if self.unembed is None:
                raise user_error(f"{base_model} has no linear output head to train: set train_unembed to false")
            names.append(self.unembed)
        return names


@dataclass
class BaseSlot:
    """A loaded base model and the training clients on it (one PeftModel, one adapter per client)."""

    key: tuple[str, str, str]
    base_model: str
    loaded: LoadedBase
    groups: TargetGroups
    peft: Any = None
    clients: dict[str, "TrainingClient"] = field(default_factory=dict)

    @property
    def model(self) -> Any:
        return self.loaded.model

    @property
    def vocab_size(self) -> int:
        return int(self.model.get_input_embeddings().num_embeddings)

    @property
    def output_vocab_size(self) -> int:
        head = self.model.get_output_embeddings()
        return int(getattr(head, "out_features", self.vocab_size))

    @property
    def context(self) -> int | None:
        n = getattr(self.model.config, "max_position_embeddings", None)
        return int(n) if n else None


@dataclass
class TrainingClient:
    model_id: str
    adapter: str  # the PEFT adapter name on the base's PeftModel
    base: BaseSlot
    lora: LoraSpec
    target_modules: list[str]
    # Trainable parameters by the name adapter_model.safetensors gives them (PEFT's get_peft_model_state_dict keys,
    # which drop the adapter name), the names optimizer.safetensors uses too (docs/tinker.md §3.2).
    params: dict[str, torch.nn.Parameter]
    optimizer: torch.optim.AdamW | None = None
    adam_step: int = 0
    answers: "OrderedDict[str, dict[str, Any]]" = field(default_factory=OrderedDict)

    @property
    def trainable_parameters(self) -> int:
        return sum(p.numel() for p in self.params.values())

    def clear_grads(self) -> None:
        for p in self.params.values():
            p.grad = None

    def remember(self, request_id: str, answer: dict[str, Any]) -> None:
        self.answers[request_id] = answer
        while len(self.answers) > ANSWERS_KEPT:
            self.answers.popitem(last=False)


class ClientPool:
    """The training clients this worker holds, and the base models under them (several at once, as memory allows)."""

    def __init__(
        self,
        device: torch.device,
        dtype: torch.dtype,
        models_dir: Path,
        hf_cache: str | None,
        gradient_checkpointing: bool,
    ):
        self.device = device
        self.dtype = dtype
        self.models_dir = models_dir
        self.hf_cache = hf_cache
        self.gradient_checkpointing = gradient_checkpointing
        self.clients: dict[str, TrainingClient] = {}
        self.bases: dict[tuple[str, str, str], BaseSlot] = {}

    def get(self, model_id: str) -> TrainingClient | None:
        return self.clients.get(model_id)

    def loaded_models(self) -> list[Any]:
        return [slot.model for slot in self.bases.values()]

    def create(self, model_id: str, payload: dict[str, Any]) -> TrainingClient:
        if model_id in self.clients:
            raise server_error(f"training client {model_id} already exists on this worker")
        lora = LoraSpec.from_payload(payload.get("lora"))
        base_model = payload.get("base_model")
        if not isinstance(base_model, str) or not base_model:
            raise user_error("create_model needs base_model")
        slot = self._slot(base_model, payload.get("base_model_path"))
        try:
            return self._add(slot, model_id, lora)
        finally:
            if not slot.clients:
                self._release(slot)

    def _slot(self, base_model: str, base_model_path: str | None) -> BaseSlot:
        try:
            # A missing or broken model directory, a model the cache lacks: the operator's to fix, not the
            # caller's, so category server, with model.py's message that says what to do.
            source = resolve_model_source(base_model, base_model_path, self.models_dir)
            key = (source, str(self.device), str(self.dtype))
            if key in self.bases:
                return self.bases[key]
            if cached_base(source, self.device, self.dtype) is None:
                # load_base replaces the job path's cached base: its memory counts as free (unless a training
                # client still holds it) once it is dropped and collected.
                drop_cache()
                gc.collect()
                if self.device.type == "cuda":
                    torch.cuda.empty_cache()
                self._check_memory(base_model, source)
            loaded = load_base(source, base_model, self.device, self.dtype, self.hf_cache, require_chat_template=False)
        except TrainingError as err:
            raise server_error(str(err)) from err
        slot = BaseSlot(key=key, base_model=base_model, loaded=loaded, groups=TargetGroups.of(loaded.model))
        self.bases[key] = slot
        return slot

    def _check_memory(self, base_model: str, source: str) -> None:
        fits, need, free = memory.fits_base(self.device, source, self.dtype, self.hf_cache)
        if not fits:
            raise server_error(
                f"worker {os.uname().nodename} has not enough memory for base model {base_model}: it needs about "
                f"{_gib(need)} GiB and {_gib(free)} GiB are free. Close the training clients you no longer use "
                "(unload_model), so that the base models only they used are freed, or use a worker with more memory."
            )

    def _add(self, slot: BaseSlot, model_id: str, lora: LoraSpec) -> TrainingClient:
        from peft import LoraConfig, get_peft_model, get_peft_model_state_dict

        targets = slot.groups.select(lora, slot.base_model)
        config = LoraConfig(
            r=lora.rank,
            lora_alpha=lora.alpha,
            lora_dropout=0.0,
            target_modules=targets,
            task_type="CAUSAL_LM",
        )
        adapter = "tinker_" + re.sub(r"\W", "_", model_id)
        # The seed decides the initialisation (PEFT's: Kaiming-uniform A, zero B, drawn on the CPU) without
        # disturbing the RNG of anything else; without one, fresh entropy: two unseeded clients differ.
        devices = [self.device] if self.device.type == "cuda" else []
        with torch.random.fork_rng(devices=devices), warnings.catch_warnings():
            for pattern in _TIED_WARNINGS:
                warnings.filterwarnings("ignore", message=pattern)
            torch.manual_seed(lora.seed if lora.seed is not None else int.from_bytes(os.urandom(8), "little") >> 1)
            if slot.peft is None:
                # PEFT keeps adapter weights in fp32 over a bf16 base (autocast_adapter_dtype, its default).
                slot.peft = get_peft_model(slot.model, config, adapter_name=adapter)
                if self.gradient_checkpointing:
                    # Once wrapped, so that _release (detach_adapter) undoes it with the wrapping.
                    enable_gradient_checkpointing(slot.model)
            else:
                slot.peft.add_adapter(adapter, config)
        marker = f".{adapter}."
        params = {n.replace(marker, "."): p for n, p in slot.peft.named_parameters() if marker in n}
        saved = get_peft_model_state_dict(slot.peft, adapter_name=adapter, save_embedding_layers=False)
        if set(saved) != set(params):
            slot.peft.delete_adapter(adapter)
            raise server_error(
                "this worker's PEFT version names adapter weights unlike its parameters "
                f"({sorted(set(saved) ^ set(params))[:3]}); install the PEFT version of pyproject.toml"
            )
        client = TrainingClient(model_id, adapter, slot, lora, targets, params)
        slot.clients[model_id] = client
        self.clients[model_id] = client
        return client

    def activate(self, client: TrainingClient) -> Any:
        """The base's PeftModel with this client's adapter active (and alone trainable)."""
        client.base.peft.set_adapter(client.adapter)
        return client.base.peft

    def free(self, model_id: str) -> bool:
        """Frees a training client: its adapter, optimizer and gradients; its base too when no client uses it."""
        client = self.clients.pop(model_id, None)
        if client is None:
            return False
        slot = client.base
        del slot.clients[model_id]
        client.optimizer = None
        client.clear_grads()
        if slot.clients:
            with warnings.catch_warnings():
                # "Adapter … was active which is now deleted": each request activates its own client's anyway.
                warnings.filterwarnings("ignore", message=".*was active which is now deleted.*")
                slot.peft.delete_adapter(client.adapter)
        else:
            self._release(slot)
        if self.device.type == "cuda":
            torch.cuda.empty_cache()
        return True

    def _release(self, slot: BaseSlot) -> None:
        """The last client is gone: unwrap the base so model.py's cache (the job path) finds it clean."""
        if slot.peft is not None:
            detach_adapter(slot.peft)
            slot.peft = None
        self.bases.pop(slot.key, None)


def adapter_config_json(client: TrainingClient) -> bytes:
    """adapter_config.json as PEFT's save_pretrained writes it, for this client's adapter alone: the base model's
    id (not this machine's path), the target modules in a stable order (the server's CPU engine reads them)."""
    config = client.base.peft.peft_config[client.adapter].to_dict()
    for k, v in config.items():
        if isinstance(v, set):
            config[k] = sorted(v)
    config["target_modules"] = list(client.target_modules)
    config["base_model_name_or_path"] = client.base.base_model
    config["inference_mode"] = True  # as PEFT saves it: loaded for inference unless asked otherwise
    return json.dumps(config, indent=2, sort_keys=True).encode()


def _gib(n: int | None) -> str:
    return "?" if n is None else f"{n / (1 << 30):.1f}"
