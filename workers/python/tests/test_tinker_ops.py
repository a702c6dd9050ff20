"""Tinker operations on a training client (docs/tinker.md §2.4–2.6) against direct PyTorch computations.

The direct side runs the PEFT model on one datum at a time (no padding, no micro-batches), takes a full
log_softmax, and writes each loss from the formulas of docs/tinker.md §2.4; the worker's side goes through the
wire tensors, padded micro-batches and its own loss code. Loss, log-probabilities and the gradient with respect
to every LoRA parameter must agree.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from safetensors import safe_open

from conftest import DEVICE
from tinker_util import BASE, create, datum, make_pool, perturb, token_rows
from tuneboard_worker.tinker import ops
from tuneboard_worker.tinker.errors import TinkerError
from tuneboard_worker.tinker.tensors import decode_tensor

LENGTHS = [5, 9, 7]
# Small enough that the three datums take several padded micro-batches.
MICRO = 20


@pytest.fixture()
def pool(models_dir):
    p = make_pool(models_dir)
    yield p
    for model_id in list(p.clients):
        p.free(model_id)


@pytest.fixture()
def client(pool):
    c = create(pool, "model-a")
    perturb(c, seed=1)
    return c


def direct_logprobs(pool, client, tokens: np.ndarray, targets: np.ndarray) -> torch.Tensor:
    model = pool.activate(client)
    model.eval()
    logits = model(input_ids=torch.from_numpy(tokens)[None].to(DEVICE)).logits[0]
    logp = torch.log_softmax(logits.float(), dim=-1)
    t = torch.from_numpy(targets).to(DEVICE)
    return logp.gather(-1, t[:, None]).squeeze(-1) if t.ndim == 1 else logp.gather(-1, t)


def direct(pool, client, rows, inputs, formula):
    """(loss, gradients by parameter name, per-datum logprobs): the loss the formula gives, summed over datums."""
    total = torch.zeros((), device=DEVICE)
    lps = []
    for row, inp in zip(rows, inputs):
        targets = inp.get("target_tokens", row[1:])
        lp = direct_logprobs(pool, client, row[:-1], targets)
        lps.append(lp.detach().cpu().numpy())
        total = total + formula(lp, {k: torch.from_numpy(v).to(DEVICE) for k, v in inp.items() if k != "target_tokens"}).sum()
    names = list(client.params)
    grads = torch.autograd.grad(total, [client.params[n] for n in names])
    return float(total.detach()), dict(zip(names, grads)), lps


def run(pool, client, loss_fn, rows, inputs, config=None, backward=True, micro=MICRO):
    data = [datum(row[:-1], **{"target_tokens": row[1:], **inp}) for row, inp in zip(rows, inputs)]
    payload = {"loss_fn": loss_fn, "loss_fn_config": config, "data": data}
    return ops.forward(pool, client, payload, backward=backward, micro_batch_tokens=micro)


def assert_same(result, client, want_loss, want_grads, want_lps):
    assert result["metrics"]["loss:sum"] == pytest.approx(want_loss, rel=1e-5, abs=1e-5)
    for out, lp in zip(result["loss_fn_outputs"], want_lps):
        got = decode_tensor(out["logprobs"], "logprobs")
        assert got.dtype == np.float32 and got.shape == lp.shape
        np.testing.assert_allclose(got, lp, rtol=1e-5, atol=1e-5)
    for name, g in want_grads.items():
        assert client.params[name].grad is not None, name
        assert_close_grad(client.params[name].grad, g, name)


def assert_close_grad(got: torch.Tensor, want: torch.Tensor, name: str) -> None:
    """Padding, batching and summation order change float32 rounding: entries far below the tensor's largest are
    compared against that scale (a wrong formula or a lost datum is off by far more)."""
    scale = float(want.abs().max())
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5 * scale, msg=lambda m: f"{name}: {m}")


def sampled_logprobs(pool, client, rows, seed, noise=0.3):
    """The 'sampler's' logprobs: the model's own, moved by noise so that ratios spread around 1."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        return [direct_logprobs(pool, client, r[:-1], r[1:]).cpu().numpy() + rng.normal(0, noise, len(r) - 1).astype(np.float32) for r in rows]


def advantages(rows, seed):
    rng = np.random.default_rng(seed)
    out = []
    for r in rows:
        a = rng.normal(0, 1, len(r) - 1).astype(np.float32)
        a[0] = 0.0  # a token without a term
        out.append(a)
    return out


# --- the losses -------------------------------------------------------------------------------------------------


def test_cross_entropy_with_negative_weights_matches_the_direct_computation(pool, client):
    rows = token_rows(0, LENGTHS)
    rng = np.random.default_rng(5)
    weights = [rng.normal(0, 1, len(r) - 1).astype(np.float32) for r in rows]  # negative ones among them
    weights[1][:3] = 0.0
    assert any((w < 0).any() for w in weights)
    inputs = [{"weights": w} for w in weights]
    want = direct(pool, client, rows, inputs, lambda lp, i: -i["weights"] * lp)
    result = run(pool, client, "cross_entropy", rows, inputs)
    assert_same(result, client, *want)
    assert result["stats"]["num_sequences"] == 3 and result["stats"]["num_tokens"] == sum(LENGTHS)
    assert result["stats"]["num_loss_tokens"] == sum(LENGTHS) - 3
    # The dashboard's loss is loss_sum / weight_sum: the weighted mean NLL, whatever the weights sum to.
    assert result["stats"]["weight_sum"] == pytest.approx(float(sum(np.abs(w).sum() for w in weights)), rel=1e-5)


def test_cross_entropy_without_weights_weighs_every_token_one(pool, client):
    rows = token_rows(1, LENGTHS)
    want = direct(pool, client, rows, [{} for _ in rows], lambda lp, i: -lp)
    result = run(pool, client, "cross_entropy", rows, [{} for _ in rows])
    assert_same(result, client, *want)
    assert result["stats"]["weight_sum"] == sum(LENGTHS)  # one per token


def test_cross_entropy_with_k_weighted_targets_per_position(pool, client):
    rows = token_rows(2, LENGTHS)
    rng = np.random.default_rng(6)
    inputs = [
        {"target_tokens": rng.integers(0, 2000, (len(r) - 1, 3)).astype(np.int64), "weights": rng.normal(0, 1, (len(r) - 1, 3)).astype(np.float32)}
        for r in rows
    ]
    want = direct(pool, client, rows, inputs, lambda lp, i: -i["weights"] * lp)
    data = [datum(r[:-1], **inp) for r, inp in zip(rows, inputs)]
    result = ops.forward(pool, client, {"loss_fn": "cross_entropy", "loss_fn_config": None, "data": data}, backward=True, micro_batch_tokens=MICRO)
    assert_same(result, client, *want)
    assert decode_tensor(result["loss_fn_outputs"][0]["logprobs"], "lp").shape == (LENGTHS[0], 3)


def test_importance_sampling_matches_the_direct_computation(pool, client):
    rows = token_rows(3, LENGTHS)
    inputs = [{"logprobs": lp, "advantages": a} for lp, a in zip(sampled_logprobs(pool, client, rows, 7), advantages(rows, 8))]
    want = direct(pool, client, rows, inputs, lambda lp, i: -torch.exp(lp - i["logprobs"]) * i["advantages"])
    result = run(pool, client, "importance_sampling", rows, inputs)
    assert_same(result, client, *want)
    stats = result["stats"]
    assert stats["num_loss_tokens"] == sum(LENGTHS) - 3  # the zero advantages
    # kl_sample_train: mean of logprobs − lp over the loss tokens.
    kl = np.concatenate([(i["logprobs"] - lp)[1:] for i, lp in zip(inputs, want[2])]).mean()
    assert stats["kl_sample_train"] == pytest.approx(float(kl), rel=1e-4)
    assert "clip_fraction" not in stats


def ppo_formula(lo, hi):
    def f(lp, i):
        r = torch.exp(lp - i["logprobs"])
        low = i.get("clip_low_threshold", lo)
        high = i.get("clip_high_threshold", hi)
        unclipped = r * i["advantages"]
        clipped = torch.clip(r, low, high) * i["advantages"]
        return -torch.where(unclipped < clipped, unclipped, clipped) * i.get("weights", 1.0)

    return f


@pytest.mark.parametrize(
    "config, thresholds, weights",
    [(None, None, False), ({"clip_low_threshold": 0.9, "clip_high_threshold": 1.05}, None, True), ({"clip_low_threshold": 0.5}, "tensor", False)],
    ids=["defaults", "config-and-weights", "per-token-tensors-win"],
)
def test_ppo_with_clipping_active_matches_the_direct_computation(pool, client, config, thresholds, weights):
    rows = token_rows(4, LENGTHS)
    rng = np.random.default_rng(9)
    inputs = [{"logprobs": lp, "advantages": a} for lp, a in zip(sampled_logprobs(pool, client, rows, 10), advantages(rows, 11))]
    if weights:
        for i in inputs:
            i["weights"] = rng.uniform(0.5, 2.0, len(i["advantages"])).astype(np.float32)
    lo, hi = 0.8, 1.2
    if config:
        lo, hi = config.get("clip_low_threshold", lo), config.get("clip_high_threshold", hi)
    if thresholds == "tensor":
        for i in inputs:
            n = len(i["advantages"])
            i["clip_low_threshold"] = rng.uniform(0.7, 0.95, n).astype(np.float32)
            i["clip_high_threshold"] = rng.uniform(1.05, 1.3, n).astype(np.float32)
    want = direct(pool, client, rows, inputs, ppo_formula(lo, hi))
    result = run(pool, client, "ppo", rows, inputs, config)
    assert_same(result, client, *want)
    assert 0.0 < result["stats"]["clip_fraction"] < 1.0  # clipping is active on some tokens, not all


@pytest.mark.parametrize("config", [None, {"clip_low_threshold": 0.5, "clip_high_threshold": 1.5}], ids=["defaults", "config"])
def test_cispo_matches_the_direct_computation_with_the_clipped_ratio_detached(pool, client, config):
    rows = token_rows(5, LENGTHS)
    inputs = [{"logprobs": lp, "advantages": a} for lp, a in zip(sampled_logprobs(pool, client, rows, 12, noise=1.5), advantages(rows, 13))]
    lo, hi = (0.0, 4.0) if config is None else (0.5, 1.5)

    def cispo(lp, i):
        r = torch.exp(lp - i["logprobs"]).detach()
        return -torch.clip(r, lo, hi) * i["advantages"] * lp

    want = direct(pool, client, rows, inputs, cispo)
    result = run(pool, client, "cispo", rows, inputs, config)
    assert_same(result, client, *want)
    assert 0.0 < result["stats"]["clip_fraction"] < 1.0


@pytest.mark.parametrize("beta", [None, 0.5])
def test_dro_matches_the_direct_computation(pool, client, beta):
    rows = token_rows(6, LENGTHS)
    inputs = [{"logprobs": lp, "advantages": a} for lp, a in zip(sampled_logprobs(pool, client, rows, 14), advantages(rows, 15))]
    b = 0.05 if beta is None else beta
    want = direct(pool, client, rows, inputs, lambda lp, i: -(lp * i["advantages"] - 0.5 * b * (lp - i["logprobs"]) ** 2))
    result = run(pool, client, "dro", rows, inputs, None if beta is None else {"beta": beta})
    assert_same(result, client, *want)


# --- accumulation -----------------------------------------------------------------------------------------------


def test_two_forward_backward_calls_accumulate_to_one_call_on_both_batches_and_forward_changes_nothing(pool, client):
    rows = token_rows(7, [4, 6, 8, 3])
    ones = [{"weights": np.ones(len(r) - 1, np.float32)} for r in rows]
    both = run(pool, client, "cross_entropy", rows, ones, micro=4096)
    want = {n: p.grad.clone() for n, p in client.params.items()}
    client.clear_grads()
    first = run(pool, client, "cross_entropy", rows[:2], ones[:2])
    second = run(pool, client, "cross_entropy", rows[2:], ones[2:])
    assert first["metrics"]["loss:sum"] + second["metrics"]["loss:sum"] == pytest.approx(both["metrics"]["loss:sum"], rel=1e-6)
    for n, p in client.params.items():
        assert_close_grad(p.grad, want[n], n)
    before = {n: p.grad.clone() for n, p in client.params.items()}
    out = run(pool, client, "cross_entropy", rows, ones, backward=False)
    assert out["metrics"]["loss:sum"] == pytest.approx(both["metrics"]["loss:sum"], rel=1e-6)
    for n, p in client.params.items():
        assert torch.equal(p.grad, before[n])


def test_a_failed_forward_backward_leaves_the_accumulated_gradient_as_it_was(pool, client):
    rows = token_rows(8, LENGTHS)
    run(pool, client, "cross_entropy", rows, [{} for _ in rows])
    before = {n: p.grad.clone() for n, p in client.params.items()}
    # The second datum's ratio exp(lp − logprobs) overflows: found after the first micro-batch's backward.
    inputs = [{"logprobs": np.zeros(len(r) - 1, np.float32), "advantages": np.ones(len(r) - 1, np.float32)} for r in rows]
    inputs[2]["logprobs"][:] = -1000.0
    with pytest.raises(TinkerError) as err:
        run(pool, client, "importance_sampling", rows, inputs, micro=10)
    assert err.value.category == "user" and "datum 2" in str(err.value)
    for n, p in client.params.items():
        assert torch.equal(p.grad, before[n])


# --- optim_step -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("clip", [0.0, 0.5])
def test_optim_step_is_adamw_by_hand_reports_the_pre_clip_norm_and_clears_gradients(pool, client, clip):
    rows = token_rows(9, LENGTHS)
    names = list(client.params)
    hand = [client.params[n].detach().clone().requires_grad_(True) for n in names]
    adam = None
    for step, lr in enumerate([1e-2, 3e-3], start=1):
        run(pool, client, "cross_entropy", rows, [{} for _ in rows])
        grads = [client.params[n].grad.detach().clone() for n in names]
        norm = math.sqrt(sum(float((g.double() ** 2).sum()) for g in grads))
        hp = {"learning_rate": lr, "beta1": 0.9, "beta2": 0.95, "eps": 1e-8, "weight_decay": 0.1, "grad_clip_norm": clip}
        result = ops.optim_step(client, {"adam_params": hp})
        for h, g in zip(hand, grads):
            h.grad = g
        if clip:
            assert norm > clip  # clipping is active
            torch.nn.utils.clip_grad_norm_(hand, clip)
        if adam is None:
            adam = torch.optim.AdamW(hand, lr=lr, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1)
        for group in adam.param_groups:
            group["lr"] = lr
        adam.step()
        assert result["metrics"]["optim/grad_norm"] == pytest.approx(norm, rel=1e-5)
        assert result["metrics"]["optim/learning_rate"] == lr and result["metrics"]["optim/step"] == step
        assert result["stats"]["grad_norm"] == result["metrics"]["optim/grad_norm"]
        assert all(p.grad is None for p in client.params.values())
        for n, h in zip(names, hand):
            torch.testing.assert_close(client.params[n].detach(), h.detach(), rtol=1e-6, atol=1e-7, msg=n)


def test_optim_step_without_a_gradient_changes_nothing(pool, client):
    before = {n: p.detach().clone() for n, p in client.params.items()}
    result = ops.optim_step(client, {"adam_params": {"learning_rate": 0.1, "weight_decay": 0.5}})
    assert result["metrics"] == {"optim/grad_norm": 0.0, "optim/learning_rate": 0.1, "optim/step": 0.0}
    assert all(torch.equal(p, before[n]) for n, p in client.params.items())


# --- save and load ----------------------------------------------------------------------------------------------


def step(pool, client, rows, lr=1e-2):
    run(pool, client, "cross_entropy", rows, [{} for _ in rows])
    return ops.optim_step(client, {"adam_params": {"learning_rate": lr, "beta1": 0.9, "beta2": 0.95, "eps": 1e-8, "weight_decay": 0.01}})


def save(client, with_optimizer=True) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    result = ops.save_weights(client, files.__setitem__, with_optimizer=with_optimizer)
    assert result == {"files": [{"name": n, "size": len(d)} for n, d in files.items()]}
    return files


def load(client, files, optimizer):
    return ops.load_weights(client, {"optimizer": optimizer, "files": list(files)}, files.__getitem__)


def test_save_then_load_with_optimizer_continues_exactly_like_the_original(pool, client):
    rows = token_rows(10, LENGTHS)
    step(pool, client, rows)
    step(pool, client, rows)
    files = save(client)
    assert list(files) == ["adapter_config.json", "adapter_model.safetensors", "optimizer.safetensors"]
    fresh = create(pool, "model-b", seed=99)
    run(pool, fresh, "cross_entropy", rows, [{} for _ in rows])  # a gradient that loading must clear
    assert load(fresh, files, optimizer=True) == {}
    assert all(p.grad is None for p in fresh.params.values()) and fresh.adam_step == 2
    a, b = step(pool, client, rows), step(pool, fresh, rows)
    assert a == {**b, "stats": a["stats"]} and b["metrics"]["optim/step"] == 3
    for n, p in client.params.items():
        assert torch.equal(p, fresh.params[n]), n


def test_load_without_optimizer_resets_adamw(pool, client):
    rows = token_rows(11, LENGTHS)
    step(pool, client, rows)
    files = save(client)
    other = create(pool, "model-b")
    step(pool, other, rows)
    load(other, files, optimizer=False)
    assert other.optimizer is None and other.adam_step == 0
    assert all(torch.equal(p, client.params[n]) for n, p in other.params.items())
    # Its next step is a first AdamW step from the loaded weights: not the original's second.
    assert step(pool, other, rows)["metrics"]["optim/step"] == 1
    step(pool, client, rows)
    assert any(not torch.equal(p, client.params[n]) for n, p in other.params.items())


def test_saved_files_are_peft_files_with_the_optimizer_state_named_alike(pool, client, tmp_path):
    rows = token_rows(12, LENGTHS)
    files = save(client)
    with safe_open_bytes(files["optimizer.safetensors"], tmp_path) as f:
        assert f.metadata() == {"format": "tuneboard-adamw-1", "step": "0"} and list(f.keys()) == []
    step(pool, client, rows)
    files = save(client)
    config = json.loads(files["adapter_config.json"])
    assert config["base_model_name_or_path"] == BASE and config["r"] == 4 and config["lora_alpha"] == 32
    assert config["target_modules"] == ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj", "lm_head"]
    with safe_open_bytes(files["adapter_model.safetensors"], tmp_path) as f:
        weight_names = set(f.keys())
    assert weight_names == set(client.params) and all(".lora_A.weight" in n or ".lora_B.weight" in n for n in weight_names)
    with safe_open_bytes(files["optimizer.safetensors"], tmp_path) as f:
        assert f.metadata() == {"format": "tuneboard-adamw-1", "step": "1"}
        assert set(f.keys()) == {n + s for n in weight_names for s in (".exp_avg", ".exp_avg_sq")}
        assert all(f.get_tensor(k).dtype == torch.float32 for k in f.keys())


def safe_open_bytes(data: bytes, tmp_path):
    path = tmp_path / "f.safetensors"
    path.write_bytes(data)
    return safe_open(str(path), framework="pt")


@pytest.mark.filterwarnings("ignore:Model has `tie_word_embeddings=True`")
def test_the_sampler_weights_load_in_plain_peft_with_the_same_logits(pool, client, models_dir, tmp_path):
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    step(pool, client, token_rows(13, LENGTHS))
    files: dict[str, bytes] = {}
    assert [f["name"] for f in ops.save_weights(client, files.__setitem__, with_optimizer=False)["files"]] == [
        "adapter_config.json",
        "adapter_model.safetensors",
    ]
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    base = AutoModelForCausalLM.from_pretrained(models_dir / "tiny-qwen3", dtype=torch.float32).eval()
    ids = torch.from_numpy(token_rows(14, [12])[0])[None]
    with torch.no_grad():
        plain = base(input_ids=ids).logits
        peft = PeftModel.from_pretrained(base, str(tmp_path)).eval()
        want = pool.activate(client).eval()(input_ids=ids.to(DEVICE)).logits.cpu()
        got = peft(input_ids=ids).logits
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    assert not torch.allclose(plain, want, atol=1e-3)  # the adapter does change them


# --- what the caller gets wrong ---------------------------------------------------------------------------------


def fb(pool, client, data, loss_fn="cross_entropy", config=None):
    return ops.forward(pool, client, {"loss_fn": loss_fn, "loss_fn_config": config, "data": data}, backward=True, micro_batch_tokens=MICRO)


@pytest.mark.parametrize(
    "make, says",
    [
        (lambda r: [datum(r[:-1], target_tokens=r[1:]), datum(np.array([1, 2, 200000, 4]), target_tokens=np.array([1, 2, 3, 4]))],
         "datum 1: token 200000 at position 2 is outside the vocabulary of test/tiny-qwen3 (151669 tokens)"),
        (lambda r: [datum(r[:-1], target_tokens=np.array([5, -1, 3, 4, 5]))], "datum 0: target token -1 at position 1 is outside the vocabulary"),
        (lambda r: [datum(np.zeros(2049, np.int64), target_tokens=np.zeros(2049, np.int64))], "datum 0: 2049 tokens are more than the context of test/tiny-qwen3 (2048 tokens)"),
        (lambda r: [datum(r[:-1], target_tokens=r[1:-1])], "datum 0: target_tokens has shape [4]"),
        (lambda r: [datum(r[:-1], target_tokens=r[1:], weights=np.ones(3, np.float32))], "datum 0: weights has shape [3], target_tokens [5]"),
        (lambda r: [datum(r[:-1], target_tokens=r[1:], advantages=np.ones(5, np.float32))], "datum 0: loss_fn_inputs advantages are not inputs of cross_entropy"),
        (lambda r: [datum(r[:-1], target_tokens=r[1:], weights=np.array([1, np.nan, 1, 1, 1], np.float32))], "datum 0: weights at position 1 is nan"),
        (lambda r: [{"tokens": {"dtype": "float16", "shape": [1], "data": "AAA="}, "loss_fn_inputs": {}}], "dtype 'float16' is not one of"),
    ],
    ids=["token-out-of-vocabulary", "negative-target", "too-long", "target-shape", "weights-shape", "foreign-input", "nan-weight", "bad-dtype"],
)
def test_bad_input_is_a_user_error_naming_datum_and_position(pool, client, make, says):
    rows = token_rows(15, [5])
    with pytest.raises(TinkerError) as err:
        fb(pool, client, make(rows[0]))
    assert err.value.category == "user"
    assert says in str(err.value)
    assert all(p.grad is None for p in client.params.values())


@pytest.mark.parametrize(
    "loss_fn, config, inputs, says",
    [
        ("ppo", None, {"advantages"}, "ppo needs loss_fn_inputs logprobs"),
        ("mse", None, set(), "unknown loss_fn 'mse'"),
        ("ppo", {"beta": 0.1}, {"advantages", "logprobs"}, "loss_fn_config keys 'beta' do not apply to ppo"),
        ("ppo", {"clip_low_threshold": 1.5}, {"advantages", "logprobs"}, "clip_low_threshold (1.5) is above clip_high_threshold"),
    ],
)
def test_a_wrong_loss_or_missing_input_is_a_user_error(pool, client, loss_fn, config, inputs, says):
    r = token_rows(16, [5])[0]
    extra = {k: np.zeros(5, np.float32) for k in inputs}
    with pytest.raises(TinkerError) as err:
        fb(pool, client, [datum(r[:-1], target_tokens=r[1:], **extra)], loss_fn, config)
    assert err.value.category == "user" and says in str(err.value)


def test_a_state_of_other_lora_settings_or_without_optimizer_is_refused_saying_what_differs(pool, client):
    files = save(client)
    other = create(pool, "model-b", rank=8, train_unembed=False)
    with pytest.raises(TinkerError) as err:
        load(other, files, optimizer=True)
    message = str(err.value)
    assert err.value.category == "user" and "rank 4 (this training client: 8)" in message and "lm_head" in message
    sampler = {k: v for k, v in files.items() if k != "optimizer.safetensors"}
    with pytest.raises(TinkerError) as err:
        load(create(pool, "model-c"), sampler, optimizer=True)
    assert err.value.category == "user"
    assert str(err.value) == "that path holds sampler weights without an optimizer state; use load_state"


@pytest.mark.parametrize(
    "adam, says",
    [({"learning_rate": -1.0}, "learning_rate must not be negative"), ({"beta2": 1.0}, "beta2 must be in [0, 1)"), ({"eps": "x"}, "eps must be a finite number")],
)
def test_bad_adam_params_are_user_errors(client, adam, says):
    with pytest.raises(TinkerError) as err:
        ops.optim_step(client, {"adam_params": adam})
    assert err.value.category == "user" and says in str(err.value)


def test_a_ppo_ratio_that_overflows_where_the_clip_wins_is_refused_not_accumulated_as_nan(pool, client):
    # The loss is finite (min takes clip(r)·A for A > 0), but its gradient is 0 · ∞ = NaN.
    r = token_rows(17, [5])[0]
    inputs = {"logprobs": np.full(5, -1000.0, np.float32), "advantages": np.ones(5, np.float32)}
    with pytest.raises(TinkerError) as err:
        fb(pool, client, [datum(r[:-1], target_tokens=r[1:], **inputs)], "ppo")
    assert err.value.category == "user" and "the gradient of this call is not finite" in str(err.value)
    assert all(p.grad is None for p in client.params.values())
