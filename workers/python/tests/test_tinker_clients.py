"""Training clients sharing a base model (docs/tinker.md §3): their LoRA targets and initialisation, that one never
changes or uses another's state, the tied output head, and a clean base for the job path once they are freed."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from conftest import DEVICE
from tinker_util import BASE, create, datum, make_pool, perturb, token_rows
from tuneboard_worker import model as job_model
from tuneboard_worker.model import attach_adapter, detach_adapter, load_base, lora_settings
from tuneboard_worker.tinker import ops
from tuneboard_worker.tinker.errors import TinkerError
from tuneboard_worker.tinker.tensors import decode_tensor

ATTN = ["q_proj", "k_proj", "v_proj", "o_proj"]
MLP = ["gate_proj", "up_proj", "down_proj"]


@pytest.fixture()
def pool(models_dir):
    p = make_pool(models_dir)
    yield p
    for model_id in list(p.clients):
        p.free(model_id)


def modules_of(client) -> set[str]:
    """The module names (last part) that carry this client's LoRA weights."""
    return {name.split(".lora_")[0].rsplit(".", 1)[-1] for name in client.params}


@pytest.mark.parametrize(
    "flags, targets",
    [
        ({"train_attn": True, "train_mlp": False, "train_unembed": False}, ATTN),
        ({"train_attn": False, "train_mlp": True, "train_unembed": False}, MLP),
        ({"train_attn": False, "train_mlp": False, "train_unembed": True}, ["lm_head"]),
        ({"train_attn": True, "train_mlp": True, "train_unembed": True}, ATTN + MLP + ["lm_head"]),
    ],
    ids=["attn", "mlp", "unembed", "all"],
)
def test_train_flags_pick_the_attention_mlp_and_output_head_modules(pool, flags, targets):
    client = create(pool, "m", **flags)
    assert client.target_modules == targets
    assert modules_of(client) == set(targets)
    # rank 4: A is 4 × in, B is out × 4, per targeted layer (2 decoder layers; the head once).
    assert client.trainable_parameters == sum(p.numel() for p in client.params.values()) > 0


def test_all_train_flags_false_is_a_user_error(pool):
    with pytest.raises(TinkerError) as err:
        create(pool, "m", train_attn=False, train_mlp=False, train_unembed=False)
    assert err.value.category == "user" and "train nothing" in str(err.value)
    assert pool.bases == {}  # nothing left wrapped


def test_a_seed_makes_the_initialisation_reproducible(pool):
    a = create(pool, "a", seed=7)
    b = create(pool, "b", seed=7)
    c = create(pool, "c", seed=8)
    d = create(pool, "d", seed=None)
    e = create(pool, "e", seed=None)
    lora_a = [n for n in a.params if "lora_A" in n]
    assert all(torch.equal(a.params[n], b.params[n]) for n in a.params)
    assert not torch.equal(a.params[lora_a[0]], c.params[lora_a[0]])
    assert not torch.equal(d.params[lora_a[0]], e.params[lora_a[0]])
    # PEFT's initialisation: B starts at zero, so a new adapter leaves the base's outputs as they were.
    assert all(not p.detach().any() for n, p in a.params.items() if "lora_B" in n)


def fb(pool, client, rows):
    data = [datum(r[:-1], target_tokens=r[1:]) for r in rows]
    return ops.forward(pool, client, {"loss_fn": "cross_entropy", "loss_fn_config": None, "data": data}, backward=True, micro_batch_tokens=4096)


def logprobs(pool, client, rows):
    data = [datum(r[:-1], target_tokens=r[1:]) for r in rows]
    out = ops.forward(pool, client, {"loss_fn": "cross_entropy", "loss_fn_config": None, "data": data}, backward=False, micro_batch_tokens=4096)
    return [decode_tensor(o["logprobs"], "lp") for o in out["loss_fn_outputs"]]


def snapshot(client):
    state = {}
    if client.optimizer is not None:
        state = {n: {k: v.clone() for k, v in client.optimizer.state[p].items()} for n, p in client.params.items()}
    return (
        {n: p.detach().clone() for n, p in client.params.items()},
        {n: None if p.grad is None else p.grad.clone() for n, p in client.params.items()},
        state,
    )


def assert_unchanged(before, client):
    weights, grads, state = before
    after = snapshot(client)
    for n in weights:
        assert torch.equal(after[0][n], weights[n]), n
        assert (grads[n] is None and after[1][n] is None) or torch.equal(after[1][n], grads[n]), n
    assert after[2].keys() == state.keys()
    for n in state:
        assert all(torch.equal(after[2][n][k], state[n][k]) for k in state[n]), n


def test_two_clients_on_one_base_never_touch_each_other(pool):
    rows = token_rows(20, [6, 8])
    adam = {"adam_params": {"learning_rate": 1e-2, "weight_decay": 0.1, "grad_clip_norm": 1.0}}
    a = create(pool, "a", seed=1, rank=4, train_unembed=True)
    b = create(pool, "b", seed=2, rank=8, train_unembed=False, train_attn=False)
    assert a.base is b.base and len(pool.bases) == 1
    perturb(a, 3)
    perturb(b, 4)
    # A has weights, an AdamW state, and an accumulated gradient in flight.
    fb(pool, a, rows)
    ops.optim_step(a, adam)
    fb(pool, a, rows)
    a_before = snapshot(a)
    # Only the active client's LoRA weights are trainable.
    pool.activate(b)
    trainable = {n for n, p in b.base.peft.named_parameters() if p.requires_grad}
    assert trainable == {n for n, p in b.base.peft.named_parameters() if f".{b.adapter}." in n}
    for _ in range(2):
        fb(pool, b, rows)
        ops.optim_step(b, adam)
    assert_unchanged(a_before, a)
    b_before = snapshot(b)
    b_logprobs = logprobs(pool, b, rows)
    # A's steps (its output-head LoRA included) do not reach B's outputs, weights, gradients or AdamW state.
    a_logprobs = logprobs(pool, a, rows)
    ops.optim_step(a, adam)
    fb(pool, a, rows)
    assert_unchanged(b_before, b)
    assert all(np.array_equal(x, y) for x, y in zip(logprobs(pool, b, rows), b_logprobs))
    assert not all(np.array_equal(x, y) for x, y in zip(logprobs(pool, a, rows), a_logprobs))


def test_a_lora_on_the_tied_output_head_changes_the_output_projection_only(pool, models_dir):
    client = create(pool, "head", train_attn=False, train_mlp=False, train_unembed=True)
    perturb(client, 5, scale=0.2)
    peft = pool.activate(client).eval()
    base = client.base.model
    head = base.get_output_embeddings()
    embed = base.get_input_embeddings()
    # Still tied: the head's base weight is the embedding matrix, which the LoRA did not touch.
    assert head.base_layer.weight is embed.weight
    fresh = load_base(str(models_dir / "tiny-qwen3"), BASE, DEVICE, torch.float32, None, require_chat_template=False)
    assert fresh.model is base  # the cached base model, wrapped in place
    ids = torch.from_numpy(token_rows(21, [7])[0])[None].to(DEVICE)
    with torch.no_grad():
        out = peft(input_ids=ids, output_hidden_states=True)
        h = out.hidden_states[-1][0]
        a = client.params["base_model.model.lm_head.lora_A.weight"]
        b = client.params["base_model.model.lm_head.lora_B.weight"]
        scale = client.lora.alpha / client.lora.rank
        want = h @ embed.weight.T + scale * (h @ a.T @ b.T)
        torch.testing.assert_close(out.logits[0], want, rtol=1e-4, atol=1e-4)
        # The input side is the plain embedding: the first hidden state is the embedding lookup.
        torch.testing.assert_close(out.hidden_states[0][0], embed.weight[ids[0]])


def test_freeing_the_last_client_leaves_a_clean_base_that_the_job_path_trains(pool, models_dir):
    source = str(models_dir / "tiny-qwen3")
    base = load_base(source, BASE, DEVICE, torch.float32, None)
    ids = torch.from_numpy(token_rows(22, [9])[0])[None].to(DEVICE)
    with torch.no_grad():
        clean_logits = base.model(input_ids=ids).logits
    a = create(pool, "a", train_unembed=True)
    b = create(pool, "b", train_unembed=False)
    perturb(a, 6)
    fb(pool, a, token_rows(23, [5]))
    assert pool.free("a") and "b" in pool.clients and len(pool.bases) == 1
    assert not any("tinker_a" in n for n, _ in b.base.peft.named_parameters())
    assert pool.free("b") and pool.bases == {} and pool.clients == {}
    model = base.model
    assert job_model._cache is base and not hasattr(model, "peft_config")
    assert not any("lora" in n for n, _ in model.named_modules())
    assert not any(p.requires_grad for p in model.parameters()) or all(p.grad is None for p in model.parameters())
    with torch.no_grad():
        assert torch.equal(model(input_ids=ids).logits, clean_logits)
    # The job path: a LoRA attached, one gradient step, detached.
    again = load_base(source, BASE, DEVICE, torch.float32, None)
    assert again is base
    peft = attach_adapter(again, lora_settings(None), None, False)
    peft.train()
    loss = -torch.log_softmax(peft(input_ids=ids).logits[0, :-1], -1).gather(-1, ids[0, 1:, None]).sum()
    loss.backward()
    assert all(p.grad is not None for n, p in peft.named_parameters() if p.requires_grad)
    detach_adapter(peft)
    assert not any("lora" in n for n, _ in model.named_modules())


def test_memory_admission_counts_the_base_to_load_and_a_new_adapter(pool, models_dir, monkeypatch):
    from tuneboard_worker.tinker import memory

    source = str(models_dir / "tiny-qwen3")
    size = (models_dir / "tiny-qwen3" / "model.safetensors").stat().st_size
    assert memory.base_weight_bytes(source, torch.float32, None) == size
    assert memory.base_weight_bytes(source, torch.bfloat16, None) == size // 2
    assert memory.base_weight_bytes("no/such-model", torch.float32, str(models_dir)) is None
    # A base that is not loaded must fit beside the headroom; the job path's cached base counts as free.
    job_model.drop_cache()
    monkeypatch.setattr(memory, "available_bytes", lambda device: size + memory.HEADROOM - 1)
    with pytest.raises(TinkerError) as err:
        create(pool, "a")
    assert err.value.category == "server" and "not enough memory for base model test/tiny-qwen3" in str(err.value)
    assert pool.bases == {}
    monkeypatch.setattr(memory, "available_bytes", lambda device: size + memory.HEADROOM)
    client = create(pool, "a")
    # One more client needs its LoRA state (estimated at rank 64 on every linear layer) beside the headroom.
    state = memory.lora_state_bytes(client.base.model)
    assert state > 64 * 16 * (64 + 151669)  # the output head alone
    monkeypatch.setattr(memory, "available_bytes", lambda device: state + memory.HEADROOM)
    assert memory.fits_new_client(pool.device, pool.loaded_models())
    monkeypatch.setattr(memory, "available_bytes", lambda device: state + memory.HEADROOM - 1)
    assert not memory.fits_new_client(pool.device, pool.loaded_models())
    monkeypatch.setattr(memory, "available_bytes", lambda device: None)  # unknown: the count alone decides
    assert memory.fits_new_client(pool.device, pool.loaded_models())
