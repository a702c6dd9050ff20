"""The Tinker API end to end on the wire (docs/tinker.md §2): a real server (the production build), one real worker
for the module, and tests/tinker_wire_client.py speaking the SDK's wire — JSON bodies as SDK 0.24 sends them,
protobuf ForwardBackwardRequests (optionally zstd) as 0.25 does, results read as JSON and as protobuf.

What is checked: the three body encodings and two result encodings agree value for value; out-of-order chunks run
in seq_id order and accumulate; resent requests answer the first request_id and run once; every loss's value,
log-probabilities and gradient against a direct PyTorch computation in this process (PEFT on the adapter the
server hands out; the gradient through the weights after one AdamW step, next to torch.optim.AdamW applied here);
a supervised loop and an RL loop (sampling on the server's built-in engine) learn; sampler saves are checkpoints
that chat serves; bad requests get clear 4xx answers or user-category failures, never a 500.

Tiny Qwen3 (2 layers, width 64, the real 151,669-token vocabulary), rank-4/8 LoRA, one worker thread.
"""

from __future__ import annotations

import math
import signal
import subprocess
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Iterator

import httpx
import numpy as np
import pytest
import torch

from conftest import Api, start_worker
from tinker_wire_client import Datum, ForwardOutput, RequestFailed, TinkerWire, TrainingClient, forward_backward_proto, sdk_key, zstd

BASE = "test/tiny-qwen3"
VOCAB = 151669  # the tiny Qwen3's vocabulary (the real Qwen3 tokenizer's)


# ---- fixtures ------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tw(server, models_dir, workdir) -> Iterator[SimpleNamespace]:
    """One user, one SDK session and one worker (one thread, Tinker only) for the whole module."""
    api = Api(server)
    log = workdir / "tinker-wire-worker.log"
    worker = start_worker(server, models_dir, "--kinds", "tinker", "--max-training-clients", "16", log=log)
    wire = TinkerWire(server, sdk_key(api.http))
    try:
        yield SimpleNamespace(api=api, wire=wire, session=wire.create_session("wire-tests"), worker=worker, log=log, workdir=workdir, server=server)
    finally:
        wire.close()
        # Nothing of its state matters any more: SIGTERM, and a kill if its 10-second long poll holds it up.
        worker.send_signal(signal.SIGTERM)
        try:
            worker.wait(timeout=3)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait(timeout=30)


@contextmanager
def training_client(tw: SimpleNamespace, **lora: Any) -> Iterator[TrainingClient]:
    """A training client for one test, closed (unload_model) at its end so the worker frees it."""
    tc = tw.wire.create_model(tw.session, BASE, **lora)
    try:
        yield tc
    finally:
        try:
            tw.wire.retrieve(tw.wire.submit("unload_model", {"model_id": tc.model_id, "type": "unload_model"}), timeout=60)
        except Exception:  # noqa: BLE001 - a test that failed may have left it unusable; the worker frees it at exit
            pass


class Reference:
    """The tiny Qwen3 in this process, with a LoRA adapter as the server hands it out (PEFT's own loader)."""

    def __init__(self, path: Path):
        self.path = path

    def load(self, adapter_dir: Path):
        from peft import PeftModel
        from transformers import AutoModelForCausalLM

        base = AutoModelForCausalLM.from_pretrained(self.path, dtype=torch.float32)
        model = PeftModel.from_pretrained(base, str(adapter_dir), is_trainable=True)
        model.eval()
        return model


@pytest.fixture(scope="module")
def reference(models_dir) -> Reference:
    return Reference(models_dir / "tiny-qwen3")


def lora_params(model) -> dict[str, torch.nn.Parameter]:
    """The LoRA parameters by the names adapter_model.safetensors gives them (PEFT's, without the adapter name)."""
    return {n.replace(".default.", "."): p for n, p in model.named_parameters() if "lora_" in n}


def adapter_tensors(folder: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    return load_file(str(folder / "adapter_model.safetensors"))


def direct_logprobs(model, tokens: np.ndarray, targets: np.ndarray) -> torch.Tensor:
    """log_softmax over the whole vocabulary, one datum at a time, no padding."""
    logits = model(input_ids=torch.as_tensor(tokens, dtype=torch.long)[None]).logits[0].float()
    logp = torch.log_softmax(logits, dim=-1)
    t = torch.as_tensor(targets, dtype=torch.long)
    return logp.gather(-1, t[:, None]).squeeze(-1) if t.ndim == 1 else logp.gather(-1, t)


def rows(seed: int, lengths: list[int], vocab: int = 2000) -> list[np.ndarray]:
    """Token rows of N + 1 ids: input row[:-1], targets row[1:]."""
    rng = np.random.default_rng(seed)
    return [rng.integers(0, vocab, n + 1).astype(np.int64) for n in lengths]


def ce_data(seed: int, lengths: list[int]) -> list[Datum]:
    return [Datum(r[:-1], {"target_tokens": r[1:]}) for r in rows(seed, lengths)]


def assert_close_outputs(got: ForwardOutput, want: ForwardOutput, *, exact: bool = True) -> None:
    assert len(got.logprobs) == len(want.logprobs)
    for a, b in zip(got.logprobs, want.logprobs):
        assert a.dtype == np.float32 and a.shape == b.shape, (a.dtype, a.shape, b.shape)
        if exact:
            np.testing.assert_array_equal(a, b)
        else:
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    if exact:
        assert got.metrics == want.metrics
    else:
        assert got.loss == pytest.approx(want.loss, rel=1e-5)


def assert_pending(wire: TinkerWire, request_id: str, seconds: float = 1.5) -> None:
    """The request has no result yet: retrieve_future holds the call (up to TUNEBOARD_TINKER_WAIT_SECONDS) and
    answers try_again; a result or a failure would come at once."""
    try:
        r = wire.post("retrieve_future", {"request_id": request_id}, timeout=seconds)
    except httpx.ReadTimeout:
        return
    assert r.status_code == 200 and r.json().get("type") == "try_again", r.text[:500]


# ---- 1. encodings ------------------------------------------------------------------------------------------------


def encoding_data() -> list[Datum]:
    """1-D targets with weights (one negative, one zero), another length, and (N, K) targets with weights sent as
    sparse CSR (as the SDK sends 2-D torch tensors; zeros dropped by CSR come back as zeros)."""
    a, b = rows(1, [5, 9])
    rng = np.random.default_rng(2)
    k_targets = rng.integers(1, 2000, (6, 2))
    k_weights = np.array([[1.0, 0.5], [0.0, 1.0], [0.25, 0.0], [1.0, 1.0], [0.0, 0.0], [2.0, -1.0]], np.float32)
    return [
        Datum(a[:-1], {"target_tokens": a[1:], "weights": np.array([1.0, -0.5, 0.0, 2.0, 1.0], np.float32)}),
        Datum(b[:-1], {"target_tokens": b[1:], "weights": np.ones(9, np.float32)}),
        Datum(rng.integers(0, 2000, 6), {"target_tokens": k_targets, "weights": k_weights}, sparse=("target_tokens", "weights")),
    ]


def test_json_protobuf_and_zstd_bodies_give_the_same_results_in_json_and_protobuf(tw):
    data = encoding_data()
    with training_client(tw) as tc:
        futures = {}
        for encoding in ("json", "proto", "zstd"):
            futures[f"forward_backward/{encoding}"] = tc.forward_backward(data, "cross_entropy", encoding=encoding)
        for encoding in ("json", "proto", "zstd"):  # json: POST /forward; proto, zstd: forward_only
            futures[f"forward/{encoding}"] = tc.forward(data, "cross_entropy", encoding=encoding)
        outputs = {(name, result): tw.wire.forward_result(rid, proto=result == "proto") for name, rid in futures.items() for result in ("json", "proto")}
        first = outputs[("forward_backward/json", "json")]
        assert [a.shape for a in first.logprobs] == [(5,), (9,), (6, 2)]
        assert math.isfinite(first.loss) and first.loss != 0
        # Every call ran on the same weights (forward_backward only accumulates), so all twelve decodings agree bit
        # for bit: values, shapes, dtypes, metrics.
        for key, out in outputs.items():
            assert out.loss_fn_output_type == "ArrayRecord", key
            assert set(out.metrics) == {"loss:sum"}, key
            assert_close_outputs(out, first)
        # The loss is the weighted sum of the logprobs (docs/tinker.md §2.4), CSR zeros included as zeros.
        want = -sum(float((d.inputs["weights"] * lp).sum()) for d, lp in zip(data, first.logprobs))
        assert first.loss == pytest.approx(want, rel=1e-5)

        # The three forward_backward calls accumulated three times one call's gradient; the forward-only calls
        # none. A learning rate of 0 leaves the weights as they are.
        # (optim_step's result is JSON even to a caller that accepts protobuf: only forward results and samples
        # have a protobuf form.)
        three = tw.wire.retrieve(tc.optim_step(learning_rate=0.0), proto=True)["metrics"]["optim/grad_norm"]
        tc.forward_backward(data, "cross_entropy", encoding="zstd")
        one = tc.step(learning_rate=0.0)["optim/grad_norm"]
        assert one > 0
        assert three == pytest.approx(3 * one, rel=1e-4)


# ---- 2. out-of-order chunks --------------------------------------------------------------------------------------


ADAM_REVEALING = {"learning_rate": 0.02, "beta1": 0.9, "beta2": 0.95, "eps": 1e-4, "weight_decay": 0.0, "grad_clip_norm": 0.0}


def test_chunks_sent_out_of_order_run_in_seq_order_and_accumulate(tw):
    """The SDK sends the chunks of one forward_backward concurrently and the first chunk last (docs/tinker.md §2.3).
    Chunks 2 and 3, the optim_step (4) and a forward (5) arrive before chunk 1: none may run until it does, and the
    forward must then see the weights of one step over all three chunks — as a twin client (same LoRA seed) that
    got the same data in one request."""
    chunks = [ce_data(10 + i, [4 + i, 7 - i]) for i in range(3)]
    probe = ce_data(20, [8, 5])
    with training_client(tw, seed=7) as twin, training_client(tw, seed=7) as tc:
        before = twin.run_forward(probe, backward=False)
        whole = twin.run_forward([d for chunk in chunks for d in chunk])
        twin_step = twin.step(**ADAM_REVEALING)
        want = twin.run_forward(probe, backward=False)

        assert [tc.next_seq() for _ in range(5)] == [1, 2, 3, 4, 5]
        bodies = {seq: tc.fb_request(chunks[seq - 1], seq_id=seq, encoding="zstd") for seq in (1, 2, 3)}
        optim = {"adam_params": ADAM_REVEALING, "model_id": tc.model_id, "seq_id": 4, "type": "optim_step"}
        forward = tc.fb_request(probe, seq_id=5, encoding="json", forward_only=True)
        with ThreadPoolExecutor(4) as pool:
            later = [pool.submit(tc.send, *bodies[2]), pool.submit(tc.send, *bodies[3]), pool.submit(tw.wire.post, "optim_step", optim), pool.submit(tc.send, *forward)]
            answers = [tw.wire.ok(f.result()) for f in later]
        ids = {seq: a["request_id"] for seq, a in zip((2, 3, 4, 5), answers)}
        # Nothing has run: chunk 2 waits for seq_id 1.
        assert_pending(tw.wire, ids[2])
        ids[1] = tw.wire.ok(tc.send(*bodies[1]))["request_id"]

        results = [tw.wire.forward_result(ids[seq]) for seq in (1, 2, 3)]
        step = tw.wire.retrieve(ids[4])["metrics"]
        after = tw.wire.forward_result(ids[5])
        assert sum(r.loss for r in results) == pytest.approx(whole.loss, rel=1e-5)
        assert step["optim/step"] == 1
        assert step["optim/grad_norm"] == pytest.approx(twin_step["optim/grad_norm"], rel=1e-4)
        assert_close_outputs(after, want, exact=False)
        # …and the step moved the weights clearly, so a forward that ran before it (or a step over fewer chunks)
        # could not pass the comparison above.
        moved = max(float(np.abs(a - b).max()) for a, b in zip(want.logprobs, before.logprobs))
        assert moved > 100 * 1e-5, moved


# ---- 3. retried requests -----------------------------------------------------------------------------------------


def test_a_resent_request_answers_the_first_request_id_and_runs_once(tw):
    data = ce_data(30, [6, 8])
    with training_client(tw) as tc:
        seq = tc.next_seq()
        key = uuid.uuid4().hex
        route, body, headers = tc.fb_request(data, seq_id=seq, encoding="zstd")
        rid = tw.wire.ok(tc.send(route, body, headers, key))["request_id"]
        # The SDK's own retry (same X-Idempotency-Key), a resend under another key (same model_id and seq_id), the
        # same call in the JSON encoding under the first key, and four concurrent resends.
        assert tw.wire.ok(tc.send(route, body, headers, key))["request_id"] == rid
        assert tw.wire.ok(tc.send(route, body, headers, uuid.uuid4().hex))["request_id"] == rid
        assert tw.wire.ok(tc.send(*tc.fb_request(data, seq_id=seq, encoding="json"), key))["request_id"] == rid
        with ThreadPoolExecutor(4) as pool:
            again = [f.result() for f in [pool.submit(tc.send, route, body, headers, key if i % 2 else uuid.uuid4().hex) for i in range(4)]]
        assert [tw.wire.ok(r)["request_id"] for r in again] == [rid] * 4
        # A seq_id already used by another kind of request is refused, saying so.
        clash = tw.wire.post("optim_step", {"adam_params": {"learning_rate": 0.0}, "model_id": tc.model_id, "seq_id": seq})
        assert clash.status_code == 400 and "already used by a forward_backward" in clash.json()["detail"], clash.text
        first = tw.wire.forward_result(rid)

        optim_key = uuid.uuid4().hex
        optim_seq = tc.next_seq()
        optim_id = tc.optim_step(learning_rate=0.0, seq_id=optim_seq, idempotency_key=optim_key)
        once = tw.wire.retrieve(optim_id)["metrics"]
        assert tc.optim_step(learning_rate=0.0, seq_id=optim_seq, idempotency_key=optim_key) == optim_id
        assert tc.optim_step(learning_rate=0.0, seq_id=optim_seq) == optim_id

        # The same data sent once more, once: its gradient is the first one's (weights unchanged at lr 0), so the
        # first was accumulated once, not seven times; and the resent optim_step did not step again.
        second = tc.run_forward(data)
        twice = tc.step(learning_rate=0.0)
        assert second.loss == pytest.approx(first.loss, rel=1e-6)
        assert once["optim/grad_norm"] == pytest.approx(twice["optim/grad_norm"], rel=1e-5)
        assert (once["optim/step"], twice["optim/step"]) == (1, 2)


def test_an_explicit_seq_id_is_not_taken_for_a_request_sent_without_one(tw):
    with training_client(tw) as tc:
        tw.wire.forward_result(tc.forward_backward(ce_data(31, [5]), seq_id=tc.next_seq()))
        seqless = tw.wire.submit("optim_step", {"adam_params": {"learning_rate": 0.01}, "model_id": tc.model_id})
        r = tw.wire.post("optim_step", {"adam_params": {"learning_rate": 0.01}, "model_id": tc.model_id, "seq_id": tc.next_seq()})
        # Either refused, saying why, or a request of its own: never the other request's future.
        if r.status_code == 400:
            assert "seq_id" in r.json()["detail"]
        else:
            assert tw.wire.ok(r)["request_id"] != seqless


# ---- 4. each loss against PyTorch --------------------------------------------------------------------------------

# AdamW as the loss tests run it: on a fresh optimizer the first step moves each parameter by lr·g/(|g| + eps) (and
# decays it by lr·wd). With the SDK's eps (1e-12) that is lr·sign(g), which hides the gradients' sizes and flips on
# float noise where g ≈ 0; with eps = 1e-2 (the median |g| of a tensor is 1e-4 to 1) the step grows with |g| for the
# many components below about 1e-2, so the weights after it show sizes as well as signs. Measured: the server's
# weights after the step are within 2e-6 of torch.optim.AdamW's here (lr 1e-2); the bound is 1e-5; a gradient 1 %
# off lands 2.5e-5 away.
ADAM_LOSS = {"learning_rate": 1e-2, "beta1": 0.9, "beta2": 0.95, "eps": 1e-2, "weight_decay": 0.1, "grad_clip_norm": 0.0}
LOSS_LENGTHS = [6, 9]


@pytest.fixture(scope="module")
def warm(tw, reference):
    """A training client whose LoRA B matrices are no longer zero (one cross-entropy step), saved as a training
    state every loss case starts from (load_state: those weights, a fresh AdamW), and that adapter loaded here."""
    with training_client(tw, seed=3) as tc:
        tc.run_forward(ce_data(40, [7, 7, 5]))
        tc.step(learning_rate=0.02)
        path = tc.save_state("warm")
        folder = tw.wire.download_weights(path, tw.workdir / "tinker-wire" / "warm")
        assert (folder / "optimizer.safetensors").exists()  # a training state carries AdamW's
        yield SimpleNamespace(client=tc, path=path, folder=folder, model=reference.load(folder))


def thresholds(case: dict[str, Any], inputs: dict[str, torch.Tensor], like: torch.Tensor, low: float, high: float):
    """Per-token (lo, hi): a loss_fn_inputs tensor wins over loss_fn_config, which wins over the default."""
    config = case.get("config") or {}

    def bound(key: str, default: float) -> torch.Tensor:
        if key in inputs:
            return inputs[key]
        return torch.full_like(like, float(config.get(key, default)))

    return bound("clip_low_threshold", low), bound("clip_high_threshold", high)


def direct_terms(case: dict[str, Any], lp: torch.Tensor, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
    """docs/tinker.md §2.4's per-token terms, written here from the table."""
    loss = case["loss"]
    w = inputs.get("weights")
    if loss == "cross_entropy":
        return -lp if w is None else -w * lp
    adv, sampled = inputs["advantages"], inputs["logprobs"]
    ratio = torch.exp(lp - sampled)
    if loss == "importance_sampling":
        terms = -ratio * adv
    elif loss == "ppo":
        lo, hi = thresholds(case, inputs, lp, 0.8, 1.2)
        terms = -torch.minimum(ratio * adv, torch.clamp(ratio, lo, hi) * adv)
    elif loss == "cispo":
        lo, hi = thresholds(case, inputs, lp, 0.0, 4.0)
        terms = -torch.clamp(ratio, lo, hi).detach() * adv * lp
    elif loss == "dro":
        beta = float((case.get("config") or {}).get("beta", 0.05))
        terms = -(lp * adv - 0.5 * beta * (lp - sampled) ** 2)
    else:
        raise AssertionError(loss)
    return terms if w is None else terms * w


LOSS_CASES: dict[str, dict[str, Any]] = {
    "cross_entropy": {"loss": "cross_entropy", "weights": "signed"},
    "importance_sampling": {"loss": "importance_sampling", "weights": "positive"},
    "ppo": {"loss": "ppo", "config": {"clip_low_threshold": 0.9, "clip_high_threshold": 1.1}},
    # Per-token thresholds win over loss_fn_config's (which alone would clip almost nothing).
    "ppo_token_thresholds": {"loss": "ppo", "config": {"clip_low_threshold": 0.2, "clip_high_threshold": 5.0}, "token_thresholds": (0.85, 1.12)},
    "cispo": {"loss": "cispo", "config": {"clip_low_threshold": 0.8, "clip_high_threshold": 1.2}},
    "dro": {"loss": "dro", "config": {"beta": 0.5}},
}


def loss_inputs(case: dict[str, Any], model, seed: int) -> list[Datum]:
    """Datums for a case: the sampler's logprobs are the model's own plus noise, so ratios spread around 1 and the
    clipped losses clip; advantages of both signs and a few zeros."""
    rng = np.random.default_rng(seed)
    data = []
    for row in rows(seed, LOSS_LENGTHS):
        tokens, targets = row[:-1], row[1:]
        n = len(tokens)
        inputs: dict[str, np.ndarray] = {"target_tokens": targets}
        if case["loss"] != "cross_entropy":
            with torch.no_grad():
                lp = direct_logprobs(model, tokens, targets).numpy()
            inputs["logprobs"] = (lp + rng.uniform(-0.4, 0.4, n)).astype(np.float32)
            adv = rng.normal(0, 1, n).astype(np.float32)
            adv[rng.choice(n, 2, replace=False)] = 0
            inputs["advantages"] = adv
        if case.get("weights") == "signed":
            inputs["weights"] = rng.uniform(-1, 2, n).astype(np.float32)
        elif case.get("weights") == "positive":
            w = rng.uniform(0.5, 1.5, n).astype(np.float32)
            w[0] = 0
            inputs["weights"] = w
        if "token_thresholds" in case:
            lo, hi = case["token_thresholds"]
            inputs["clip_low_threshold"] = rng.uniform(lo - 0.05, lo + 0.05, n).astype(np.float32)
            inputs["clip_high_threshold"] = rng.uniform(hi - 0.05, hi + 0.05, n).astype(np.float32)
        data.append(Datum(tokens, inputs))
    return data


@pytest.mark.parametrize("name", list(LOSS_CASES))
def test_each_loss_matches_pytorch_in_value_logprobs_and_gradient(tw, warm, reference, name):
    case = LOSS_CASES[name]
    tc: TrainingClient = warm.client
    model = warm.model
    warm_weights = adapter_tensors(warm.folder)
    params = lora_params(model)
    assert set(params) == set(warm_weights)
    with torch.no_grad():
        for k, p in params.items():
            p.copy_(warm_weights[k])
    data = loss_inputs(case, model, seed=50 + list(LOSS_CASES).index(name))

    # The server: the warm state (fresh AdamW), the loss's forward_backward, one optim_step, the adapter after it.
    tc.load_state(warm.path)
    got = tc.run_forward(data, case["loss"], case.get("config"), encoding="zstd", proto=True)
    metrics = tc.step(**ADAM_LOSS)
    after = adapter_tensors(tw.wire.download_weights(tc.save_for_sampler(f"after-{name}")["path"], tw.workdir / "tinker-wire" / f"after-{name}"))

    # Here: the same loss from the formulas, on the same weights, one datum at a time.
    model.zero_grad(set_to_none=True)
    total = torch.zeros(())
    clipped = active = 0
    for d, out in zip(data, got.logprobs):
        inputs = {k: torch.from_numpy(v) for k, v in d.inputs.items() if k != "target_tokens"}
        lp = direct_logprobs(model, d.tokens, d.inputs["target_tokens"])
        np.testing.assert_allclose(out, lp.detach().numpy(), rtol=0, atol=2e-5)
        total = total + direct_terms(case, lp, inputs).sum()
        if case["loss"] in ("ppo", "cispo"):
            low, high = (0.8, 1.2) if case["loss"] == "ppo" else (0.0, 4.0)
            lo, hi = thresholds(case, inputs, lp, low, high)
            ratio = torch.exp(lp.detach() - inputs["logprobs"])
            live = inputs["advantages"] != 0
            clipped += int(((ratio < lo) | (ratio > hi))[live].sum())
            active += int(live.sum())
    assert got.loss == pytest.approx(float(total.detach()), rel=1e-5, abs=1e-5)
    if active:
        assert 0 < clipped < active, (clipped, active)  # clipping active on some tokens, not all
    total.backward()
    grads = {k: p.grad.detach().clone() if p.grad is not None else torch.zeros_like(p) for k, p in params.items()}
    norm = float(torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads.values()])))
    assert metrics["optim/grad_norm"] == pytest.approx(norm, rel=1e-4)
    # B matrices are no longer zero, so A matrices have a gradient too.
    assert all(float(grads[k].abs().max()) > 0 for k in grads if ".lora_A." in k)

    # torch.optim.AdamW applied here to the gradient computed here, from the warm weights.
    opt = torch.optim.AdamW(
        list(params.values()),
        lr=ADAM_LOSS["learning_rate"],
        betas=(ADAM_LOSS["beta1"], ADAM_LOSS["beta2"]),
        eps=ADAM_LOSS["eps"],
        weight_decay=ADAM_LOSS["weight_decay"],
    )
    with torch.no_grad():
        for k, p in params.items():
            p.grad = grads[k]
    opt.step()
    lr = ADAM_LOSS["learning_rate"]
    worst = 0.0
    for k, p in params.items():
        want = p.detach()
        step_here = (want - warm_weights[k]).abs().max()
        diff = float((after[k] - want).abs().max())
        worst = max(worst, diff)
        assert diff <= 1e-3 * lr, (k, diff, float(step_here))
    print(f"{name}: loss {got.loss:.6g}, grad_norm {norm:.6g}, max |weights − AdamW here| {worst:.3g} (lr {lr})")


# ---- 5. a supervised loop ----------------------------------------------------------------------------------------

PROMPT = [1000, 1001, 1002]
TOKEN_A, TOKEN_B = 101, 202
COMPLETION = 6
SFT_STEPS = 20


# Four completions with A and B equally often at every position: the supervised loop makes each about as likely
# as the other after the prompt, which is where the RL loop starts.
AB_COMPLETIONS = [[TOKEN_A if ch == "A" else TOKEN_B for ch in word] for word in ("AABBAB", "BBAABA", "ABABBA", "BABAAB")]


def sft_datum(completion: list[int]) -> Datum:
    seq = PROMPT + completion
    weights = np.array([0.0] * (len(PROMPT) - 1) + [1.0] * len(completion), np.float32)
    return Datum(seq[:-1], {"target_tokens": seq[1:], "weights": weights})


@pytest.fixture(scope="module")
def sft(tw):
    """Cross-entropy on the four completions of the prompt: the loss per token falls from ln(151,669) ≈ 11.9 to about
    ln 2 (A or B, evenly). Its state is what the RL test starts from."""
    data = [sft_datum(c) for c in AB_COMPLETIONS]
    tokens = sum(len(c) for c in AB_COMPLETIONS)
    losses = []
    with training_client(tw, seed=11, rank=8) as tc:
        for _ in range(SFT_STEPS):
            losses.append(tc.run_forward(data).loss / tokens)
            tc.step(learning_rate=0.01)
        losses.append(tc.run_forward(data, backward=False).loss / tokens)
        yield SimpleNamespace(client=tc, losses=losses, state=tc.save_state("ab"))


def test_a_supervised_loop_drives_the_loss_down(sft):
    losses = sft.losses
    print("cross-entropy per token:", " ".join(f"{x:.3f}" for x in losses))
    assert losses[0] == pytest.approx(math.log(VOCAB), abs=0.5)
    assert losses[-1] < 1.0, losses
    assert losses[-1] < losses[0] / 10
    # Mostly downhill: no step undoes more than a small part of the way.
    assert max(b - a for a, b in zip(losses, losses[1:])) < 0.5, losses


# ---- 6. an RL loop -------------------------------------------------------------------------------------------------


def reward(tokens: list[int]) -> float:
    return sum(t == TOKEN_A for t in tokens) / max(1, len(tokens))


def rl_datum(sample_tokens: list[int], sample_logprobs: np.ndarray, advantage: float) -> Datum:
    seq = PROMPT + list(sample_tokens)
    pad = len(PROMPT) - 1
    return Datum(
        seq[:-1],
        {
            "target_tokens": seq[1:],
            "logprobs": np.concatenate([np.zeros(pad, np.float32), sample_logprobs.astype(np.float32)]),
            "advantages": np.array([0.0] * pad + [advantage] * len(sample_tokens), np.float32),
        },
    )


def test_an_rl_loop_raises_the_reward_and_the_sampler_agrees_with_the_trainer(tw, sft):
    """Sample 8 completions from the latest weights (asample on the server's engine), reward the share of token A,
    centre the rewards in the group, train on the sampler's logprobs (importance_sampling, then cispo), step,
    save for the sampler again. The mean reward must rise; the sampler's logprobs must be the trainer's."""
    group, iterations = 8, 4
    rewards: list[float] = []
    gaps: list[float] = []
    with training_client(tw, seed=11, rank=8) as tc:
        tc.load_state(sft.state)
        for it in range(iterations + 1):
            sampler = tc.sampling_client()
            future = sampler.asample_future(PROMPT, group, max_tokens=COMPLETION, seed=1000 + it)
            samples = tw.wire.sample_result(future, proto=it % 2 == 1)
            if it == 0:  # the same SampleResponse read as JSON and as protobuf
                other = tw.wire.sample_result(future, proto=True)
                assert [(s.tokens, s.stop_reason) for s in samples] == [(s.tokens, s.stop_reason) for s in other]
                assert all(np.array_equal(a.logprobs, b.logprobs) for a, b in zip(samples, other))
            assert len(samples) == group and all(len(s.tokens) == len(s.logprobs) >= 1 for s in samples)
            r = np.array([reward(s.tokens) for s in samples])
            rewards.append(float(r.mean()))
            if it == iterations:
                break
            adv = r - r.mean()
            data = [rl_datum(s.tokens, s.logprobs, float(a)) for s, a in zip(samples, adv)]
            loss = "importance_sampling" if it < iterations // 2 else "cispo"
            out = tc.run_forward(data, loss, encoding="zstd", proto=True)
            # The trainer's logprobs of the sampled tokens, on the weights the sampler used.
            pad = len(PROMPT) - 1
            gaps.append(max(float(np.abs(lp[pad:] - s.logprobs).max()) for lp, s in zip(out.logprobs, samples)))
            tc.step(learning_rate=0.003)
    print(f"mean reward per iteration: {' '.join(f'{x:.3f}' for x in rewards)}; max |sampler − trainer logprob| {max(gaps):.3g}")
    assert max(gaps) < 1e-3, gaps
    assert rewards[-1] > rewards[0] + 0.2, rewards
    assert rewards[-1] >= 0.8, rewards


# ---- sampler saves are checkpoints --------------------------------------------------------------------------------


def test_sampler_saves_are_checkpoints_that_chat_serves(tw, sft):
    tc: TrainingClient = sft.client
    api = tw.api
    before = {c["step"] for c in api.checkpoints(tc.model_id)}
    named = tc.save_for_sampler("sft-final")
    assert named["path"] == f"tinker://{tc.model_id}/sampler_weights/sft-final"
    unnamed = tc.save_for_sampler(None)
    assert unnamed["path"].startswith(f"tinker://{tc.model_id}/sampler_weights/ephemeral-") and unnamed["sampling_session_id"]
    checkpoints = api.checkpoints(tc.model_id)
    new = [c for c in checkpoints if c["step"] not in before]
    assert len(new) == 2, checkpoints
    # Each is a step of the model after the optim steps the client took.
    assert all(c["metrics"].get("train/optim_steps") == SFT_STEPS for c in new), new
    # The SDK's own listing names both.
    listed = tw.wire.ok(tw.wire.http.get(f"/api/v1/training_runs/{tc.model_id}/checkpoints"))["checkpoints"]
    paths = {c["tinker_path"] for c in listed}
    assert {named["path"], unnamed["path"]} <= paths
    # /v1/chat/completions serves the model's latest checkpoint (the unnamed save) with its adapter.
    r = api.http.post("/v1/chat/completions", json={"model": tc.model_id, "messages": [{"role": "user", "content": "A or B?"}], "max_tokens": 3, "temperature": 0})
    assert r.status_code == 200, r.text
    choice = r.json()["choices"][0]
    assert isinstance(choice["message"]["content"], str) and choice["finish_reason"] in ("length", "stop"), choice


# ---- 7. failures -------------------------------------------------------------------------------------------------


def assert_refused(r: httpx.Response, status: int, *words: str) -> str:
    assert r.status_code == status, f"{r.status_code}: {r.text[:500]}"
    detail = r.json()["detail"]
    text = detail if isinstance(detail, str) else str(detail)
    assert text, r.text
    for w in words:
        assert w in text, (w, text)
    return text


def test_bad_requests_are_refused_clearly_and_never_with_a_500(tw):
    wire = tw.wire
    good = ce_data(70, [4])
    with training_client(tw) as tc:
        # Refused at submission (400s naming what is wrong); each still uses up its seq_id (docs/tinker.md §2.3).
        seq = tc.next_seq()
        assert_refused(tc.send(*tc.fb_request(good, "squared_error", seq_id=seq, encoding="json")), 400, "unknown loss_fn 'squared_error'")
        seq = tc.next_seq()
        assert_refused(tc.send(*tc.fb_request(good, "no_such_loss", seq_id=seq, encoding="zstd")), 400, "unknown loss_fn 'no_such_loss'")
        seq = tc.next_seq()
        short_weights = [Datum(good[0].tokens, {**good[0].inputs, "weights": np.ones(3, np.float32)})]
        assert_refused(tc.send(*tc.fb_request(short_weights, seq_id=seq, encoding="json")), 400, "datum 0", "weights", "must match target_tokens")
        seq = tc.next_seq()
        long_targets = [Datum(good[0].tokens, {"target_tokens": np.arange(5)})]
        assert_refused(tc.send(*tc.fb_request(long_targets, seq_id=seq, encoding="proto")), 400, "datum 0", "target_tokens", "first dimension")
        seq = tc.next_seq()
        no_adv = [Datum(good[0].tokens, {**good[0].inputs, "logprobs": np.zeros(4, np.float32)})]
        assert_refused(tc.send(*tc.fb_request(no_adv, "ppo", seq_id=seq, encoding="zstd")), 400, "advantages is missing")

        # Not parseable at all: no seq_id can be read, none is used up.
        proto_headers = {"Content-Type": "application/x-protobuf"}
        assert_refused(wire.post("forward_backward", content=b"\x0a\xff\xff\xff\xff\x0f", headers=proto_headers), 400)
        truncated = forward_backward_proto(tc.model_id, None, good, "cross_entropy", None)[:-3]
        assert_refused(wire.post("forward_backward", content=truncated, headers=proto_headers), 400)
        assert_refused(wire.post("forward_backward", content=b"this is not zstd at all", headers={**proto_headers, "Content-Encoding": "zstd"}), 400, "zstd")
        assert_refused(wire.post("forward_backward", content=zstd(b"\x0a\xff\xff\xff\xff\x0f"), headers={**proto_headers, "Content-Encoding": "zstd"}), 400)

        # Accepted, then failed by the worker: token ids past the vocabulary are a user error that names them.
        for where in ("tokens", "targets"):
            tokens = np.array([5, 6, VOCAB + 7 if where == "tokens" else 7, 8])
            targets = np.array([6, 7, 8, 10**6 if where == "targets" else 9])
            rid = tc.forward_backward([Datum(tokens, {"target_tokens": targets})], encoding="zstd")
            with pytest.raises(RequestFailed) as failed:
                wire.retrieve(rid)
            assert failed.value.category == "user"
            assert str(VOCAB + 7 if where == "tokens" else 10**6) in failed.value.error and "vocabulary" in failed.value.error, failed.value.error
        # None of the above blocked the training client or changed it: the next seq_id runs at once (no wait for a
        # refused one), and the failed calls accumulated no gradient (a step finds none and does not count).
        started = time.monotonic()
        out = tc.run_forward(good, backward=False)
        assert math.isfinite(out.loss) and time.monotonic() - started < 30
        assert tc.step(learning_rate=0.1) == {"optim/grad_norm": 0.0, "optim/learning_rate": 0.1, "optim/step": 0.0}

        # Unknown ids: 404s.
        stranger = str(uuid.uuid4())
        assert_refused(wire.post("forward_backward", content=forward_backward_proto(stranger, 1, good, "cross_entropy", None), headers=proto_headers), 404, "not found")
        assert_refused(wire.post("forward_backward", content=tc.fb_request(good, seq_id=1)[1].replace(tc.model_id.encode(), stranger.encode()), headers={"Content-Type": "application/json"}), 404)
        assert_refused(wire.post("optim_step", {"adam_params": {}, "model_id": "not-a-model", "seq_id": 1}), 404)
        assert_refused(wire.post("retrieve_future", {"request_id": stranger}), 404, "Unknown request_id")
        assert_refused(wire.post("retrieve_future", {"request_id": "not-a-request"}), 404)
        # A closed training client (unload_model) takes no more requests, and says so. (unload_model has no seq_id,
        # as in the SDK; the server gives it the next one, so this request goes without one too.)
        wire.retrieve(wire.submit("unload_model", {"model_id": tc.model_id, "type": "unload_model"}))
        assert_refused(tc.send(*tc.fb_request(good, seq_id=None, encoding="json")), 400, "closed", "create_training_client_from_state")
        # No key, or a key that is not one: 401s saying how to write it.
        for headers in ({}, {"X-API-Key": "tml-tb_not-a-key"}):
            assert_refused(httpx.post(f"{tw.server}/api/v1/retrieve_future", json={"request_id": stranger}, headers=headers, timeout=30), 401)


def test_the_worker_log_has_no_server_errors(tw):
    """Everything above that failed was the caller's: the worker logged no internal error (category server)."""
    text = tw.log.read_text(errors="replace")
    assert "internal error" not in text and "Traceback" not in text, text[-3000:]
