"""What each request kind does to a training client (docs/tinker.md §2.4–2.6, §3.2): forward, forward_backward,
optim_step, save_weights(_for_sampler), load_weights. create_model and unload_model are the pool's
(clients.py)."""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import torch
from safetensors import SafetensorError
from safetensors.torch import load as load_safetensors
from safetensors.torch import save as save_safetensors

from ..forward import micro_batches, pad_batch
from .clients import ClientPool, TrainingClient, adapter_config_json
from .errors import server_error, user_error
from .losses import Loss, Stats, check_inputs, resolve_loss, token_terms
from .tensors import decode_tensor, encode_tensor

OPTIMIZER_FORMAT = "tuneboard-adamw-1"
# AdamParams' defaults in the SDK, for keys a payload leaves out.
ADAM_DEFAULTS = {"learning_rate": 1e-4, "beta1": 0.9, "beta2": 0.95, "eps": 1e-12, "weight_decay": 0.0, "grad_clip_norm": 0.0}


@dataclass
class Datum:
    tokens: np.ndarray  # int64, (N,)
    inputs: dict[str, np.ndarray]  # checked by losses.check_inputs: target_tokens int64, the rest float32

    @property
    def n(self) -> int:
        return int(self.tokens.shape[0])


def prepare_data(loss: Loss, data: Any, client: TrainingClient) -> list[Datum]:
    """Every datum decoded and checked before anything runs, so a bad one fails the call with nothing changed."""
    if not isinstance(data, list):
        raise user_error("data must be a list of datums")
    base = client.base
    out = []
    for i, d in enumerate(data):
        if not isinstance(d, dict) or not isinstance(d.get("loss_fn_inputs"), dict):
            raise user_error(f"datum {i}: expected tokens and loss_fn_inputs")
        tokens = decode_tensor(d.get("tokens"), f"datum {i}: tokens")
        if tokens.ndim != 1 or tokens.dtype.kind not in "iu":
            raise user_error(f"datum {i}: tokens must be a 1-D integer tensor, not {tokens.dtype.name} of shape {list(tokens.shape)}")
        n = len(tokens)
        if n == 0:
            raise user_error(f"datum {i} has no tokens")
        if base.context is not None and n > base.context:
            raise user_error(f"datum {i}: {n} tokens are more than the context of {base.base_model} ({base.context} tokens); shorten it")
        _check_vocabulary(i, "token", tokens, base.vocab_size, base.base_model)
        raw = {k: decode_tensor(v, f"datum {i}: loss_fn_inputs {k}") for k, v in d["loss_fn_inputs"].items()}
        inputs = check_inputs(loss, i, n, raw)
        _check_vocabulary(i, "target token", inputs["target_tokens"], base.output_vocab_size, base.base_model)
        out.append(Datum(tokens.astype(np.int64), inputs))
    return out


def _check_vocabulary(index: int, what: str, ids: np.ndarray, vocab: int, base_model: str) -> None:
    bad = (ids < 0) | (ids >= vocab)
    if bad.any():
        at = tuple(int(i) for i in np.argwhere(bad)[0])
        raise user_error(f"datum {index}: {what} {int(ids[at])} at position {at[0]} is outside the vocabulary of {base_model} ({vocab} tokens)")


class _TokenLogprobs(torch.autograd.Function):
    """log-softmax(x)[..., index] from logsumexp and a gather, with a backward that writes one logits-sized tensor:
    the gradient of both, softmax · (−Σₖ g) with g scattered onto it in place. Autograd's own backward of the two
    builds a tensor for each and adds them, a third more memory at the peak of a forward_backward."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        lse = torch.logsumexp(x, dim=-1, keepdim=True)
        ctx.save_for_backward(x, index, lse)
        return x.gather(-1, index) - lse

    @staticmethod
    def backward(ctx: Any, g: torch.Tensor) -> tuple[torch.Tensor, None]:
        x, index, lse = ctx.saved_tensors
        grad = torch.sub(x, lse).exp_()
        grad.mul_(-g.sum(-1, keepdim=True))
        return grad.scatter_add_(-1, index, g), None


def token_logprobs(logits: torch.Tensor, targets: list[torch.Tensor]) -> list[torch.Tensor]:
    """log-softmax(logits[i])[t, target[t]] for each row i of a micro-batch's (rows × longest × vocabulary) logits and
    its targets (N,) or (N, K) (N ≤ longest: its first N positions), in float32. logsumexp and a gather rather than a
    full log_softmax: no second logits-sized tensor is kept. Both run once over the whole micro-batch and each row's
    values are sliced from their small result: slicing the logits per row instead (logits[i, :N]) made the backward
    pass write a zero tensor the size of all the logits for every row's slice and add them up: a forward_backward of 8
    datums of 128 tokens on bench:tinker's tiny model (151,669-token vocabulary, 2 cores) took 2-3 times as long."""
    x = logits.float()
    rows, longest, _ = x.shape
    k = max(1 if t.ndim == 1 else int(t.shape[1]) for t in targets)
    # Padding positions and unused target slots point at token 0: computed, never read (their gradient is zero).
    index = torch.zeros((rows, longest, k), dtype=torch.long, device=x.device)
    for i, t in enumerate(targets):
        t2 = t[:, None] if t.ndim == 1 else t
        index[i, : t2.shape[0], : t2.shape[1]] = t2
    lp = _TokenLogprobs.apply(x, index)
    return [lp[i, : t.shape[0], 0] if t.ndim == 1 else lp[i, : t.shape[0], : t.shape[1]] for i, t in enumerate(targets)]


def forward(
    pool: ClientPool, client: TrainingClient, payload: dict[str, Any], *, backward: bool, micro_batch_tokens: int
) -> dict[str, Any]:
    """`forward` (backward=False: no gradient, nothing changes) or `forward_backward`: the loss's gradient is added
    to the client's accumulated gradients (docs/tinker.md §2.4). All or nothing: a call that fails leaves them as they were."""
    started = time.monotonic()
    loss = resolve_loss(payload.get("loss_fn"), payload.get("loss_fn_config"))
    datums = prepare_data(loss, payload.get("data"), client)
    model = pool.activate(client)
    # Train mode only for forward_backward, where gradient checkpointing (CUDA) needs it; dropout is 0 in the
    # LoRA layers, and the architectures served here have none elsewhere, so both modes compute the same.
    model.train(backward)
    device = pool.device
    params = list(client.params.values())
    # This call's gradient is computed alone and added to what was accumulated at the end, so a failure half way
    # (a non-finite loss, out of memory) can put the earlier gradient back untouched.
    earlier = [p.grad for p in params]
    if backward:
        client.clear_grads()
    stats = Stats(loss)
    outputs: list[dict[str, Any]] = [{} for _ in datums]
    try:
        with torch.set_grad_enabled(backward):
            for group in micro_batches([d.n for d in datums], micro_batch_tokens):
                ids, mask = pad_batch([datums[i].tokens for i in group])
                logits = model(input_ids=ids.to(device), attention_mask=mask.to(device)).logits
                group_inputs = [{k: torch.from_numpy(v).to(device) for k, v in datums[i].inputs.items()} for i in group]
                group_lps = token_logprobs(logits, [inputs["target_tokens"] for inputs in group_inputs])
                group_loss: torch.Tensor | None = None
                for row, i in enumerate(group):
                    inputs, lp = group_inputs[row], group_lps[row]
                    datum_loss = token_terms(loss, lp, inputs).sum()
                    value = float(datum_loss.detach())
                    if backward and not math.isfinite(value):
                        raise _not_finite(loss, f"datum {i}: the {loss.fn.name} loss is {value}")
                    stats.add(lp.detach(), inputs, value)
                    outputs[i] = {"logprobs": encode_tensor(lp.detach().float().cpu().numpy())}
                    group_loss = datum_loss if group_loss is None else group_loss + datum_loss
                del logits
                if backward and group_loss is not None:
                    group_loss.backward()
        # A finite loss can still have a NaN gradient: a ratio that overflowed where PPO's min takes the clipped
        # side passes 0 · ∞ back. One NaN would spoil the accumulated gradient for good.
        # One device sync for all of them (a GPU would otherwise wait once per LoRA tensor).
        grads = [p.grad for p in params if p.grad is not None]
        if backward and grads and not bool(torch.stack([torch.isfinite(g).all() for g in grads]).all()):
            raise _not_finite(loss, "the gradient of this call is not finite")
    except torch.cuda.OutOfMemoryError as err:
        _restore(params, earlier)
        torch.cuda.empty_cache()
        raise server_error(
            f"the GPU ran out of memory in {'forward_backward' if backward else 'forward'} of {len(datums)} datums "
            f"({sum(d.n for d in datums)} tokens, the longest {max(d.n for d in datums)}): send fewer or shorter datums "
            f"per call, or start the worker with a smaller --micro-batch-tokens (now {micro_batch_tokens})"
        ) from err
    except BaseException:
        _restore(params, earlier)
        raise
    if backward:
        for p, g in zip(params, earlier):
            if g is not None:
                p.grad = g if p.grad is None else p.grad.add_(g)
    result_stats = stats.as_dict()
    result_stats["seconds"] = time.monotonic() - started
    return {"loss_fn_outputs": outputs, "metrics": {"loss:sum": stats.loss_sum}, "stats": result_stats}


def _restore(params: list[torch.nn.Parameter], grads: list[torch.Tensor | None]) -> None:
    for p, g in zip(params, grads):
        p.grad = g


def _not_finite(loss: Loss, what: str) -> Exception:
    """Inputs are checked finite, so a ratio exp(lp − logprobs) that overflowed is the caller's; anything else is
    the model's."""
    if loss.fn.name in ("importance_sampling", "ppo", "cispo"):
        return user_error(
            f"{what}: a ratio exp(lp − logprobs) overflowed, so logprobs are far below the model's own; send the "
            "sampler's log-probabilities of target_tokens. Nothing was accumulated."
        )
    return server_error(f"{what}: the model's log-probabilities are not finite. Nothing was accumulated.")


def optim_step(client: TrainingClient, payload: dict[str, Any]) -> dict[str, Any]:
    """AdamW over the client's own LoRA parameters with the call's hyperparameters (docs/tinker.md §2.5), then gradients cleared."""
    started = time.monotonic()
    hp = _adam_params(payload.get("adam_params"))
    params = list(client.params.values())
    with_grad = [p for p in params if p.grad is not None]
    grad_norm = 0.0
    if with_grad:
        # The norm before clipping is what is reported; max_norm=inf measures it without changing the gradients.
        clip = hp["grad_clip_norm"] if hp["grad_clip_norm"] > 0 else math.inf
        grad_norm = float(torch.nn.utils.clip_grad_norm_(with_grad, clip))
        if not math.isfinite(grad_norm):
            client.clear_grads()
            raise user_error(
                f"the accumulated gradient's norm is {grad_norm}: no step was taken and the gradients were cleared. "
                "Lower the learning rate or check the losses' inputs (weights, advantages)."
            )
    if client.optimizer is None:
        client.optimizer = torch.optim.AdamW(params, lr=hp["learning_rate"])
    for group in client.optimizer.param_groups:
        group.update(lr=hp["learning_rate"], betas=(hp["beta1"], hp["beta2"]), eps=hp["eps"], weight_decay=hp["weight_decay"])
    # AdamW skips parameters without a gradient: an optim_step after no forward_backward changes nothing.
    if with_grad:
        client.optimizer.step()
        client.adam_step += 1
    client.clear_grads()
    return {
        "metrics": {"optim/grad_norm": grad_norm, "optim/learning_rate": hp["learning_rate"], "optim/step": float(client.adam_step)},
        "stats": {"grad_norm": grad_norm, "learning_rate": hp["learning_rate"], "seconds": time.monotonic() - started},
    }


def _adam_params(given: Any) -> dict[str, float]:
    if not isinstance(given, dict):
        raise user_error("optim_step needs adam_params")
    hp: dict[str, float] = {}
    for key, default in ADAM_DEFAULTS.items():
        v = given.get(key, default)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise user_error(f"adam_params {key} must be a finite number, not {v!r}")
        hp[key] = float(v)
    for key in ("beta1", "beta2"):
        if not 0.0 <= hp[key] < 1.0:
            raise user_error(f"adam_params {key} must be in [0, 1), not {hp[key]}")
    for key in ("learning_rate", "eps", "weight_decay", "grad_clip_norm"):
        if hp[key] < 0:
            raise user_error(f"adam_params {key} must not be negative, not {hp[key]}")
    return hp


def adapter_weights(client: TrainingClient) -> bytes:
    """adapter_model.safetensors: PEFT's key names (no adapter name), loadable by PeftModel.from_pretrained."""
    state = {k: p.detach().to("cpu").contiguous() for k, p in client.params.items()}
    return save_safetensors(state, metadata={"format": "pt"})


def optimizer_state(client: TrainingClient) -> bytes:
    """optimizer.safetensors (docs/tinker.md §3.2): `<name>.exp_avg` and `<name>.exp_avg_sq` per trainable parameter (float32) and
    the AdamW step count; with no optim_step yet, no tensors and step 0."""
    tensors: dict[str, torch.Tensor] = {}
    if client.optimizer is not None:
        for name, p in client.params.items():
            state = client.optimizer.state.get(p)
            if state:
                tensors[f"{name}.exp_avg"] = state["exp_avg"].detach().float().cpu().contiguous()
                tensors[f"{name}.exp_avg_sq"] = state["exp_avg_sq"].detach().float().cpu().contiguous()
    return save_safetensors(tensors, metadata={"format": OPTIMIZER_FORMAT, "step": str(client.adam_step)})


def save_weights(client: TrainingClient, put: Callable[[str, bytes], None], *, with_optimizer: bool) -> dict[str, Any]:
    """Writes this client's files with `put` (the server's file route), then answers their names and sizes."""
    files = [("adapter_config.json", adapter_config_json(client)), ("adapter_model.safetensors", adapter_weights(client))]
    if with_optimizer:
        files.append(("optimizer.safetensors", optimizer_state(client)))
    for name, data in files:
        put(name, data)
    return {"files": [{"name": name, "size": len(data)} for name, data in files]}


def load_weights(client: TrainingClient, payload: dict[str, Any], get: Callable[[str], bytes]) -> dict[str, Any]:
    """Loads a saved state into the client (docs/tinker.md §2.6): checked whole before anything changes. With optimizer, the
    AdamW state and step too; without, a fresh AdamW. Gradients are cleared either way."""
    names = payload.get("files") or []
    with_optimizer = bool(payload.get("optimizer"))
    if "adapter_config.json" not in names or "adapter_model.safetensors" not in names:
        raise user_error(f"that path holds no LoRA state (files: {', '.join(map(str, names)) or 'none'})")
    if with_optimizer and "optimizer.safetensors" not in names:
        raise user_error("that path holds sampler weights without an optimizer state; use load_state")
    try:
        config = json.loads(get("adapter_config.json"))
    except ValueError as err:
        raise user_error(f"the state's adapter_config.json is not JSON ({err})") from err
    _check_fits(client, config)
    shapes = {name: tuple(p.shape) for name, p in client.params.items()}
    weights = _read_safetensors(get("adapter_model.safetensors"), "adapter_model.safetensors")[0]
    _check_tensors(weights, shapes, "adapter_model.safetensors", all_required=True)
    moments: dict[str, torch.Tensor] = {}
    step = 0
    if with_optimizer:
        moments, meta = _read_safetensors(get("optimizer.safetensors"), "optimizer.safetensors")
        if meta.get("format") != OPTIMIZER_FORMAT or not str(meta.get("step", "")).isdigit():
            raise user_error(f"optimizer.safetensors is not a {OPTIMIZER_FORMAT} state (metadata {meta})")
        step = int(meta["step"])
        moment_shapes = {name + m: shape for name, shape in shapes.items() for m in (".exp_avg", ".exp_avg_sq")}
        _check_tensors(moments, moment_shapes, "optimizer.safetensors", all_required=False)
        unpaired = [n for n in shapes if (n + ".exp_avg" in moments) != (n + ".exp_avg_sq" in moments)]
        if unpaired:
            raise user_error(f"the state's optimizer.safetensors has one moment of {unpaired[0]} without the other")
    with torch.no_grad():
        for name, p in client.params.items():
            p.copy_(weights[name])
    client.clear_grads()
    client.optimizer = None
    client.adam_step = 0
    if with_optimizer and step > 0:
        params = list(client.params.values())
        client.optimizer = torch.optim.AdamW(params)
        for name, p in client.params.items():
            if f"{name}.exp_avg" in moments:
                client.optimizer.state[p] = {
                    # AdamW's own kind of step: a float32 scalar tensor on the CPU (neither fused nor capturable).
                    "step": torch.tensor(float(step), dtype=torch.float32),
                    "exp_avg": moments[f"{name}.exp_avg"].to(p.device, p.dtype),
                    "exp_avg_sq": moments[f"{name}.exp_avg_sq"].to(p.device, p.dtype),
                }
        client.adam_step = step
    return {}


def _check_fits(client: TrainingClient, config: dict[str, Any]) -> None:
    """A state fits when its LoRA settings are the client's (docs/tinker.md §3.2: rank and targets; alpha and base too)."""
    targets = config.get("target_modules")
    saved_targets = sorted([targets] if isinstance(targets, str) else targets or [])
    differ = []
    if config.get("r") != client.lora.rank:
        differ.append(f"rank {config.get('r')} (this training client: {client.lora.rank})")
    if saved_targets != sorted(client.target_modules):
        differ.append(f"target modules {saved_targets} (this training client: {sorted(client.target_modules)})")
    if config.get("lora_alpha") is not None and float(config["lora_alpha"]) != client.lora.alpha:
        differ.append(f"alpha {config['lora_alpha']} (this training client: {client.lora.alpha:g})")
    saved_base = config.get("base_model_name_or_path")
    if saved_base and saved_base != client.base.base_model:
        differ.append(f"base model {saved_base} (this training client: {client.base.base_model})")
    if differ:
        raise user_error(
            "the saved state does not fit this training client: it has " + "; ".join(differ) + ". Create the "
            "training client with the state's settings (base model, rank, train_attn, train_mlp, train_unembed), "
            "e.g. with create_training_client_from_state."
        )


def _read_safetensors(data: bytes, file: str) -> tuple[dict[str, torch.Tensor], dict[str, str]]:
    try:
        tensors = load_safetensors(data)
        header_len = int.from_bytes(data[:8], "little")
        meta = json.loads(data[8 : 8 + header_len]).get("__metadata__") or {}
    except (SafetensorError, ValueError) as err:
        raise user_error(f"the state's {file} is not a safetensors file ({err})") from err
    return tensors, meta


def _check_tensors(tensors: dict[str, torch.Tensor], expected: dict[str, tuple[int, ...]], file: str, *, all_required: bool) -> None:
    """The file's tensors are among the expected names with their shapes (all of them unless all_required is
    False: optimizer moments exist only for parameters that had a gradient)."""
    unknown = sorted(set(tensors) - set(expected))
    missing = sorted(set(expected) - set(tensors)) if all_required else []
    wrong = sorted(k for k in set(tensors) & set(expected) if tuple(tensors[k].shape) != expected[k])
    if unknown or missing or wrong:
        found = (("unknown tensors", unknown), ("missing", missing), ("other shapes", wrong))
        parts = [f"{what}: {', '.join(names[:3])}{' …' if len(names) > 3 else ''}" for what, names in found if names]
        raise user_error(f"the state's {file} does not fit this training client ({'; '.join(parts)})")
