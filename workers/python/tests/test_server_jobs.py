"""The worker against a real Tuneboard server: SFT that teaches, RL that raises the reward, PEFT-loadable
checkpoints, cancel, SIGKILL, SIGTERM, two workers, and failures that say what to do. Tiny models, one thread."""

from __future__ import annotations

import io
import math
import os
import signal
import tarfile
import time
from pathlib import Path

import pytest
import torch

from conftest import Api, start_worker

ANSWER = "pineapple"
PROMPTS = ["Secret?", "The secret?"]


def sft_lines() -> list[dict]:
    return [{"messages": [{"role": "user", "content": p}, {"role": "assistant", "content": ANSWER}]} for p in PROMPTS]


def load_checkpoint(api: Api, model_id: str, step: int, models_dir: Path, tmp: Path):
    """The checkpoint as a user gets it: the download route's tar, opened with plain PEFT on the base model."""
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    r = api.http.get(f"/v1/preview/models/{model_id}/checkpoints/{step}/download")
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "application/x-tar"
    with tarfile.open(fileobj=io.BytesIO(r.content)) as tar:
        names = sorted(m.name.split("/")[-1] for m in tar.getmembers())
        assert names == ["adapter_config.json", "adapter_model.safetensors"]
        tar.extractall(tmp, filter="data")
    folder = next(p.parent for p in tmp.rglob("adapter_config.json"))
    base = AutoModelForCausalLM.from_pretrained(models_dir / "tiny-qwen3", dtype=torch.float32)
    tok = AutoTokenizer.from_pretrained(models_dir / "tiny-qwen3")
    return base, PeftModel.from_pretrained(base, str(folder)), tok, folder


def greedy(model, tok, prompt: str) -> str:
    ids = tok.apply_chat_template([{"role": "user", "content": prompt}], add_generation_prompt=True, return_tensors="pt", return_dict=True)
    with torch.no_grad():
        out = model.generate(**ids, max_new_tokens=12, do_sample=False)
    return tok.decode(out[0, ids["input_ids"].shape[1] :])


def test_sft_teaches_a_fixed_answer_and_the_adapter_loads_in_peft(api: Api, server, models_dir, tmp_path):
    model = api.create_model()
    url = api.upload_dataset(sft_lines())
    schedule = [1e-2] * 28 + [0.0, 0.0]  # ends at 0 like ART's schedules
    job_id = api.sft(model["id"], url, {"batch_size": 2, "learning_rate": schedule, "epochs": 30, "lora_rank": 16, "lora_alpha": 32})
    worker = start_worker(server, models_dir, "--once", "--model-ids", model["id"])
    job = api.wait(job_id)
    assert worker.wait(timeout=60) == 0
    assert job["status"] == "COMPLETED", job
    events = api.events(job_id)
    assert [e["type"] for e in events] == ["training_started"] + ["gradient_step"] * 30 + ["training_ended"]
    steps = [e["data"] for e in events if e["type"] == "gradient_step"]
    assert set(steps[0]) == {"loss", "learning_rate", "grad_norm", "num_trajectories", "num_trainable_tokens", "step_seconds", "tokens_per_second"}
    assert [s["learning_rate"] for s in steps] == schedule
    assert steps[-1]["loss"] < steps[0]["loss"]
    ckpt = next(c for c in api.checkpoints(model["id"]) if c["step"] == 1)
    assert ckpt["metrics"]["train/num_gradient_steps"] == 30

    base, peft_model, tok, folder = load_checkpoint(api, model["id"], 1, models_dir, tmp_path)
    import json

    config = json.loads((folder / "adapter_config.json").read_text())
    assert config["r"] == 16 and config["lora_alpha"] == 32
    # The download names the folder the base was registered with (its path, resolved on the server), so plain
    # Hugging Face tooling finds it offline; the worker had written Tuneboard's id there.
    base_ref = Path(config["base_model_name_or_path"])
    assert base_ref.is_absolute() and base_ref.name == "tiny-qwen3", config
    if not os.environ.get("TUNEBOARD_TEST_SERVER_URL"):
        assert base_ref.resolve() == (models_dir / "tiny-qwen3").resolve()
    taught = greedy(peft_model, tok, PROMPTS[0])
    assert ANSWER in taught
    with peft_model.disable_adapter():
        assert ANSWER not in greedy(peft_model, tok, PROMPTS[0])


def test_sft_validation_split_and_start_from_base(api: Api, server, models_dir):
    """The server holds 2 of 8 lines out and names the starting checkpoint; the worker scores the held-out lines after
    each epoch and, told to start from the base model, gets no adapter from the weights route."""
    model = api.create_model()
    lines = [{"messages": [{"role": "user", "content": f"Color {i}?"}, {"role": "assistant", "content": ANSWER}]} for i in range(8)]
    url = api.upload_dataset(lines)
    config = {"batch_size": 2, "learning_rate": 1e-2, "epochs": 2, "validation_split": 0.25, "lora_rank": 8}
    first = api.sft(model["id"], url, config)
    from_base = api.sft(model["id"], url, {**config, "start_from": "base"})
    worker = start_worker(server, models_dir, "--model-ids", model["id"])
    try:
        jobs = [api.wait(first), api.wait(from_base)]
    finally:
        worker.terminate()
        worker.wait(timeout=60)
    assert [j["status"] for j in jobs] == ["COMPLETED", "COMPLETED"], jobs
    assert [j["base_step"] for j in jobs] == [0, None]
    runs = [[e["data"] for e in api.events(j["id"]) if e["type"] == "gradient_step"] for j in jobs]
    for steps in runs:
        # 6 lines train: 3 batches per epoch; the held-out 2 are scored at the end of each epoch.
        assert ["val/loss" in s for s in steps] == [False, False, True, False, False, True]
        assert 0 <= steps[2]["val/token_accuracy"] <= 1
        assert steps[5]["val/loss"] < steps[2]["val/loss"]
    # A fresh LoRA adapter adds nothing before its first step, so a job from the base model starts at the base
    # model's loss on the same first batch, as the first job did (which started from step 0, the base model).
    assert runs[1][0]["loss"] == pytest.approx(runs[0][0]["loss"], rel=1e-4)
    ckpt = next(c for c in api.checkpoints(model["id"]) if c["step"] == 2)
    assert ckpt["metrics"]["val/loss"] == runs[1][5]["val/loss"]
    assert "train/val/loss" not in ckpt["metrics"]


def _choice(tok, token_id: int, logprob: float) -> dict:
    return {
        "finish_reason": "stop",
        "index": 0,
        "message": {"role": "assistant", "content": tok.decode([token_id])},
        "logprobs": {"content": [{"token": f"token_id:{token_id}", "logprob": logprob, "bytes": None, "top_logprobs": []}]},
    }


def test_three_rl_steps_raise_the_mean_reward(api: Api, server, models_dir, tmp_path):
    """A programmatic task: answer with one of a fixed half of the base model's top-8 first tokens. The client
    samples from the top 8 with the current checkpoint, sends the policy's logprobs as token_id:N, and the exact
    expected reward (not a sample) is measured before and after three RL jobs."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(models_dir / "tiny-qwen3")
    base = AutoModelForCausalLM.from_pretrained(models_dir / "tiny-qwen3", dtype=torch.float32)
    prompt = [{"role": "user", "content": "Pick one."}]
    ids = tok.apply_chat_template(prompt, add_generation_prompt=True, return_tensors="pt", return_dict=True)

    def first_token_logprobs(m) -> torch.Tensor:
        with torch.no_grad():
            return torch.log_softmax(m(**ids).logits[0, -1].float(), -1)

    candidates = torch.topk(first_token_logprobs(base), 8).indices.tolist()
    rewarded = set(candidates[::2])

    def expected_reward(lp: torch.Tensor) -> float:
        p = lp[candidates].exp()
        return float(sum(p[i] for i, c in enumerate(candidates) if c in rewarded) / p.sum())

    model = api.create_model()
    policy = base
    before = expected_reward(first_token_logprobs(base))
    gen = torch.Generator().manual_seed(0)
    worker = start_worker(server, models_dir, "--model-ids", model["id"], log=tmp_path / "worker.log")
    try:
        for step in range(3):
            lp = first_token_logprobs(policy)
            probs = lp[candidates].exp()
            groups = []
            for _ in range(2):
                picks = torch.multinomial(probs / probs.sum(), 6, replacement=True, generator=gen).tolist()
                trajectories = []
                for k in picks:
                    tid = candidates[k]
                    trajectories.append({"messages_and_choices": [*prompt, _choice(tok, tid, float(lp[tid]))], "reward": 1.0 if tid in rewarded else 0.0})
                groups.append({"trajectories": trajectories})
            cfg = {"learning_rate": 2e-2, "kl_penalty_coef": 0.05} if step == 0 else {"learning_rate": 2e-2}
            job_id = api.rl(model["id"], groups, cfg)
            job = api.wait(job_id)
            assert job["status"] == "COMPLETED", job
            events = api.events(job_id)
            assert events[0]["data"]["num_sequences"] > 0, events
            if step == 0:
                # A setting this worker does not act on is reported with the job, not dropped.
                assert events[0]["data"]["ignored/kl_penalty_coef"] == 0.05
            # The seeded picks give every job a group with a reward spread, so each job takes at least one gradient
            # step, and each step reports the RL metrics.
            steps = [e for e in events if e["type"] == "gradient_step"]
            assert steps, events
            for e in steps:
                assert {"loss", "policy_loss", "entropy", "grad_norm", "learning_rate", "num_trainable_tokens"} <= set(e["data"]), e
            _, policy, _, _ = load_checkpoint(api, model["id"], step + 1, models_dir, tmp_path / f"s{step}")
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=60)
    after = expected_reward(first_token_logprobs(policy))
    assert after > before + 0.05, (before, after, (tmp_path / "worker.log").read_text()[-3000:])


def _long_sft(api: Api) -> tuple[dict, str]:
    model = api.create_model()
    url = api.upload_dataset(sft_lines())
    return model, api.sft(model["id"], url, {"batch_size": 1, "learning_rate": 1e-3, "epochs": 500})


def test_cancel_stops_the_worker_at_the_next_step(api: Api, server, models_dir):
    model, job_id = _long_sft(api)
    worker = start_worker(server, models_dir, "--exit-when-idle", "3", "--model-ids", model["id"])
    api.wait(job_id, lambda j: j["completed_steps"] >= 2, timeout=120)
    cancelled = api.ok(api.http.post(f"/v1/preview/training-jobs/{job_id}/cancel"))
    assert cancelled["status"] == "FAILED"
    # The worker notices at its next heartbeat and goes idle (then exits with --exit-when-idle).
    assert worker.wait(timeout=60) == 0
    job = api.job(job_id)
    assert job["error_message"] == "cancelled" and job["completed_steps"] < 1000
    assert [c["step"] for c in api.checkpoints(model["id"])] == [0]


def test_sigkill_loses_the_job_through_the_lease_and_lists_nothing_half_written(api: Api, server, models_dir):
    model, job_id = _long_sft(api)
    worker = start_worker(server, models_dir, "--model-ids", model["id"])
    api.wait(job_id, lambda j: j["completed_steps"] >= 1, timeout=120)
    worker.kill()
    worker.wait()
    job = api.wait(job_id, timeout=60)
    assert job["status"] == "FAILED"
    assert "stopped responding" in job["error_message"]
    assert [c["step"] for c in api.checkpoints(model["id"])] == [0]


def test_sigterm_finishes_the_current_job_then_exits(api: Api, server, models_dir):
    model = api.create_model()
    url = api.upload_dataset(sft_lines())
    job_id = api.sft(model["id"], url, {"batch_size": 1, "learning_rate": 1e-3, "epochs": 3})
    worker = start_worker(server, models_dir, "--model-ids", model["id"])
    # Signalled once the worker has started the job (its training_started event), not once the job is RUNNING: a
    # signal while the claim's answer was still on its way ended the wait with the job left claimed, for the lease to
    # hand back (CI saw it once). That window is the worker waiting for work, not a current job to finish.
    deadline = time.time() + 120
    while not any(e["type"] == "training_started" for e in api.events(job_id)):
        assert time.time() < deadline, f"the worker never started job {job_id}: {api.job(job_id)}"
        time.sleep(0.3)
    worker.send_signal(signal.SIGTERM)
    assert worker.wait(timeout=120) == 0
    assert api.job(job_id)["status"] == "COMPLETED"


def test_two_workers_never_share_a_job(api: Api, server, models_dir, tmp_path):
    jobs, models = [], []
    for _ in range(3):
        model = api.create_model()
        models.append(model["id"])
        jobs.append(api.sft(model["id"], api.upload_dataset(sft_lines()[:1]), {"batch_size": 1, "epochs": 2}))
    pin = ("--model-ids", ",".join(models))
    workers = [start_worker(server, models_dir, "--exit-when-idle", "6", *pin, log=tmp_path / f"w{i}.log") for i in range(2)]
    for w in workers:
        assert w.wait(timeout=240) == 0
    for job_id in jobs:
        assert api.job(job_id)["status"] == "COMPLETED"
        types = [e["type"] for e in api.events(job_id)]
        assert types == ["training_started", "gradient_step", "gradient_step", "training_ended"]
    logs = [(tmp_path / f"w{i}.log").read_text() for i in range(2)]
    ran = [{j for j in jobs if f"job {j} completed" in log} for log in logs]
    assert ran[0].isdisjoint(ran[1]) and ran[0] | ran[1] == set(jobs)


def test_a_missing_model_directory_fails_the_job_with_what_to_do(api: Api, server, models_dir):
    model = api.create_model("test/missing-dir")
    job_id = api.rl(model["id"], [])
    # Until a worker takes it, the job says what it waits for (which reason depends on the workers other
    # tests left connected; tests/jobs/worker-registry.test.ts checks each reason).
    assert api.job(job_id)["waiting_reason"].startswith("Waiting for")
    worker = start_worker(server, models_dir, "--once", "--model-ids", model["id"])
    job = api.wait(job_id)
    worker.wait(timeout=60)
    assert job["status"] == "FAILED"
    assert "does not exist on this worker" in job["error_message"] and "--models-dir" in job["error_message"]


def test_a_job_the_worker_cannot_train_fails_with_the_reason_and_the_worker_trains_the_next(api: Api, server, models_dir, tmp_path):
    # Through the real routes: the failure reason reaches the user's GET, and the same worker process goes on.
    model = api.create_model()
    url = api.upload_dataset(sft_lines()[:1])
    bad = api.sft(model["id"], url, {"batch_size": 1, "lora_target_modules": ["no_such_proj"]})
    good = api.sft(model["id"], url, {"batch_size": 1})
    worker = start_worker(server, models_dir, "--exit-when-idle", "3", "--model-ids", model["id"], log=tmp_path / "w.log")
    job = api.wait(bad)
    assert job["status"] == "FAILED"
    assert "lora_target_modules" in job["error_message"] and "q_proj" in job["error_message"]
    assert api.wait(good)["status"] == "COMPLETED"
    assert worker.wait(timeout=60) == 0


def test_the_uploaded_adapter_gives_the_logits_the_worker_had(api: Api, server, models_dir, tmp_path, monkeypatch):
    """In-process worker: the logits of the trained PEFT model just before it is unloaded, against the
    checkpoint downloaded from the server and loaded with plain PEFT."""
    from conftest import WORKER_TOKEN
    from tuneboard_worker import runner

    probe = torch.tensor([[151644, 872, 198, 1000, 2000, 3000, 151645]])
    captured: dict[str, torch.Tensor] = {}
    real_detach = runner.detach_adapter

    def capture_then_detach(peft_model):
        peft_model.eval()
        with torch.no_grad():
            captured["logits"] = peft_model(input_ids=probe).logits.clone()
        real_detach(peft_model)

    monkeypatch.setattr(runner, "detach_adapter", capture_then_detach)
    model = api.create_model()
    job_id = api.sft(model["id"], api.upload_dataset(sft_lines()), {"batch_size": 2, "learning_rate": 1e-2, "epochs": 2})
    opts = runner.Options(
        server_url=server, token=WORKER_TOKEN, worker_id="pytest:in-process", device="cpu", models_dir=models_dir, once=True, model_ids=[model["id"]]
    )
    runner.Worker(opts).run()
    assert api.job(job_id)["status"] == "COMPLETED"
    _, peft_model, _, _ = load_checkpoint(api, model["id"], 1, models_dir, tmp_path)
    peft_model.eval()
    with torch.no_grad():
        loaded = peft_model(input_ids=probe).logits
    assert torch.allclose(loaded, captured["logits"], atol=1e-5, rtol=1e-5)
    with peft_model.disable_adapter(), torch.no_grad():
        assert not torch.allclose(peft_model(input_ids=probe).logits, loaded, atol=1e-4)
