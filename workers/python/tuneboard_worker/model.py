"""Loading a Hugging Face base model, putting a LoRA adapter on it (new or from the previous checkpoint), and
writing the adapter as PEFT's two files.

The base model stays in memory between jobs (one at a time): a job wraps it with PEFT and unloads the adapter
when done, so a worker that trains the same base model job after job (the RL loop) loads it once.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

# Defaults of the LoRA adapter when a job does not set them (documented in the README).
DEFAULT_LORA = {"rank": 16, "alpha": 32, "dropout": 0.0, "target_modules": "all-linear"}


class TrainingError(Exception):
    """A failure whose message is safe and useful to show the user as the job's error_message."""


@dataclass
class LoadedBase:
    key: tuple[str, str, str]
    model: Any
    tokenizer: Any


_cache: LoadedBase | None = None


def resolve_model_source(base_model: str, base_model_path: str | None, models_dir: Path) -> str:
    """The directory (or, with no path in the base-models file, the hub id in the HF cache) to load."""
    if base_model_path is None:
        return base_model
    p = Path(base_model_path)
    if not p.is_absolute():
        p = models_dir / p
    if not p.is_dir():
        raise TrainingError(
            f"The directory of base model {base_model} ({p}) does not exist on this worker "
            f"({os.uname().nodename}). Put the model there, start the worker with --models-dir pointing at the "
            f"folder that holds it, or fix 'path' in the base-models file."
        )
    if not (p / "config.json").is_file():
        raise TrainingError(f"{p} is not a Hugging Face model directory (no config.json) for base model {base_model}")
    # Without its tokenizer files Transformers still builds a tokenizer (an empty one, from config.json's
    # model_type), which only fails later as a confusing "no chat template": say what is missing instead.
    if not any(f.name.startswith(("tokenizer", "vocab", "spiece", "tekken")) and f.name != "tokenizer_config.json" for f in p.iterdir()):
        raise TrainingError(
            f"The directory of base model {base_model} ({p}) has no tokenizer (tokenizer.json or the tokenizer's "
            "vocabulary files): copy the tokenizer files of the model there."
        )
    return str(p)


def pick_dtype(device: torch.device, requested: str) -> torch.dtype:
    if requested == "auto":
        if device.type == "cuda" and torch.cuda.is_bf16_supported():
            return torch.bfloat16
        return torch.float32
    return {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[requested]


def load_base(
    source: str, base_model: str, device: torch.device, dtype: torch.dtype, cache_dir: str | None, *, require_chat_template: bool = True
) -> LoadedBase:
    """The base model, from the cache when it holds the same one. require_chat_template: jobs format conversations
    with it; Tinker training clients get token ids and do without (docs/tinker.md §3)."""
    global _cache
    key = (source, str(device), str(dtype))
    if _cache is not None and _cache.key == key:
        if require_chat_template:
            _check_chat_template(_cache.tokenizer, base_model)
        return _cache
    _cache = None
    from transformers import AutoModelForCausalLM, AutoTokenizer

    def load(local_only: bool) -> tuple[Any, Any]:
        tok = AutoTokenizer.from_pretrained(source, cache_dir=cache_dir, local_files_only=local_only)
        return tok, AutoModelForCausalLM.from_pretrained(source, dtype=dtype, cache_dir=cache_dir, local_files_only=local_only)

    def cannot_load(err: BaseException, advice: str) -> TrainingError:
        # ValueError: a config.json Transformers cannot use (unknown model_type, bad values), not a worker bug.
        return TrainingError(f"Cannot load base model {base_model} from {source}: {str(err).rstrip('.')}. {advice}")

    local_dir = Path(source).is_dir()
    # The cache (or the directory) first: a model that is there loads without touching the network, and one
    # that is not would otherwise cost huggingface_hub's retries, about a minute per file with DNS failing fast
    # and far longer where the network drops packets, before the job could fail.
    try:
        tokenizer, model = load(local_only=True)
    except (OSError, ValueError) as err:
        if local_dir:
            raise cannot_load(err, "Check the files of that directory on this worker.") from err
        if _hub_offline():
            raise cannot_load(
                err,
                "HF_HUB_OFFLINE=1 is set: download it into the Hugging Face cache first (hf download), "
                "or give it a local 'path' in the base-models file.",
            ) from err
        unreachable = _hub_unreachable()
        if unreachable:
            raise TrainingError(
                f"Base model {base_model} is not in the Hugging Face cache of worker {os.uname().nodename} "
                f"({cache_dir or 'HF_HOME'}) and the Hugging Face Hub cannot be reached from it ({unreachable}). "
                "Download the model into that cache (hf download), or give it a local 'path' in the base-models file."
            ) from err
        try:
            tokenizer, model = load(local_only=False)
        except (OSError, ValueError) as err2:
            raise cannot_load(err2, "Check the model id, the Hugging Face cache (--hf-cache) and HF_TOKEN on this worker.") from err2
    if require_chat_template:
        _check_chat_template(tokenizer, base_model)
    model.to(device)
    model.config.use_cache = False
    _cache = LoadedBase(key=key, model=model, tokenizer=tokenizer)
    return _cache


def _check_chat_template(tokenizer: Any, base_model: str) -> None:
    if tokenizer.chat_template is None:
        raise TrainingError(f"The tokenizer of {base_model} has no chat template; the worker needs one to format conversations")


def _hub_offline() -> bool:
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE) or os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on")


def _hub_unreachable(timeout: float = 5.0) -> str | None:
    """Why the Hub's endpoint cannot be reached (one request, a few seconds at most), or None when it answers."""
    import httpx
    from huggingface_hub import constants

    try:
        httpx.head(constants.ENDPOINT, timeout=timeout)
    except httpx.HTTPError as err:
        return f"{constants.ENDPOINT}: {type(err).__name__}: {err}"
    return None


def drop_cache() -> None:
    global _cache
    _cache = None


def cached_base(source: str, device: torch.device, dtype: torch.dtype) -> LoadedBase | None:
    """The cached base model when it is this one (load_base would return it without loading)."""
    return _cache if _cache is not None and _cache.key == (source, str(device), str(dtype)) else None


def lora_settings(job_lora: dict[str, Any] | None) -> dict[str, Any]:
    s = dict(DEFAULT_LORA)
    for k, v in (job_lora or {}).items():
        if v is not None and k in s:
            s[k] = v
    return s


def attach_adapter(base: LoadedBase, lora: dict[str, Any], adapter: tuple[bytes, bytes] | None, gradient_checkpointing: bool):
    """A PEFT model: a new LoRA adapter, or the previous checkpoint's (its own rank and targets win)."""
    from peft import LoraConfig, PeftModel, get_peft_model

    model = base.model
    if adapter is None and isinstance(lora["target_modules"], list):
        # The server cannot check module names (it does not know the architecture), and PEFT raises only when no
        # entry matches: one mistyped name among others would silently train fewer layers than asked. Checked
        # before the model is touched, so the cached base stays clean for the next job.
        unmatched = _unmatched_targets(model, lora["target_modules"])
        if unmatched:
            raise TrainingError(
                f"lora_target_modules entries that name no layer of this base model: {', '.join(map(repr, unmatched))}. "
                f"Its linear layers are named: {', '.join(_linear_layer_names(model))}; fix or remove those entries, "
                "or leave lora_target_modules out for all of them."
            )
    if gradient_checkpointing:
        enable_gradient_checkpointing(model)
    try:
        if adapter is None:
            config = LoraConfig(
                r=int(lora["rank"]),
                lora_alpha=float(lora["alpha"]),
                lora_dropout=float(lora["dropout"]),
                target_modules=lora["target_modules"],
                task_type="CAUSAL_LM",
            )
            return get_peft_model(model, config)
        config_bytes, weights = adapter
        with tempfile.TemporaryDirectory(prefix="tuneboard-adapter-") as d:
            Path(d, "adapter_config.json").write_bytes(config_bytes)
            Path(d, "adapter_model.safetensors").write_bytes(weights)
            return PeftModel.from_pretrained(model, d, is_trainable=True)
    except ValueError as err:
        # The base model may be half wrapped (LoRA layers, gradient checkpointing): the next job loads it afresh.
        drop_cache()
        if adapter is not None:
            raise TrainingError(f"The previous checkpoint's LoRA adapter cannot be loaded onto {base.key[0]}: {err}") from err
        # Names of modules PEFT cannot wrap (an attention block rather than one of its layers): PEFT's error says
        # what was asked, the list says what there is.
        raise TrainingError(
            f"lora_target_modules {lora['target_modules']!r} cannot be used with this base model ({err}). Its linear "
            f"layers are named: {', '.join(_linear_layer_names(model))}; or leave lora_target_modules out for all of them."
        ) from err


def _linear_layer_names(model: Any) -> list[str]:
    """What to offer as lora_target_modules: the linear layers' last name parts, without the output head (which has
    no dot in its name and which all-linear leaves out too)."""
    return sorted({n.rsplit(".", 1)[-1] for n, m in model.named_modules() if isinstance(m, torch.nn.Linear) and "." in n})


def _unmatched_targets(model: Any, targets: list[str]) -> list[str]:
    """The entries PEFT would match to no module: it takes a module whose full name is the entry or ends with
    "." + the entry."""
    names = [n for n, _ in model.named_modules()]
    return [t for t in targets if not any(n == t or n.endswith("." + t) for n in names)]


def enable_gradient_checkpointing(model: Any) -> None:
    """Recomputes activations in backward (non-reentrant: LoRA's inputs need gradients); detach_adapter undoes it."""
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model.enable_input_require_grads()


def detach_adapter(peft_model: Any) -> None:
    """Removes the LoRA layers so the cached base model is clean for the next job."""
    try:
        base = peft_model.unload()
        if getattr(base, "is_gradient_checkpointing", False):
            base.gradient_checkpointing_disable()
        # enable_input_require_grads (with gradient checkpointing) left a forward hook on the input embeddings
        # that it forgets when called again: each attach would add one more.
        base.disable_input_require_grads()
    except Exception:
        drop_cache()


def save_adapter(peft_model: Any, base_model_id: str, out_dir: Path, state_dict: dict[str, Any] | None = None) -> tuple[bytes, bytes]:
    """PEFT's own files; base_model_name_or_path is the base model's id (not this machine's path). It is
    rewritten after saving: PEFT looks the base up while saving, and the local path keeps that off the network.
    state_dict: the gathered weights of a sharded (FSDP) model, whose own parameters are shards."""
    peft_model.save_pretrained(str(out_dir), state_dict=state_dict)
    config_path = out_dir / "adapter_config.json"
    config = json.loads(config_path.read_text())
    config["base_model_name_or_path"] = base_model_id
    config_path.write_text(json.dumps(config, indent=2, sort_keys=True))
    return config_path.read_bytes(), (out_dir / "adapter_model.safetensors").read_bytes()
