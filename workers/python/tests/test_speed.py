"""Speed and the warm worker (issue 43 items 3 and 4): training_started says how long the job took to get going and
whether the base model was already in memory, each gradient_step its duration and trained tokens per second; a
worker keeps the base model between jobs, and job 2 starts from the base weights, not from job 1's adapter; claims
are long polls."""

from __future__ import annotations

import json
import threading
import time

import httpx
import pytest
import torch

from conftest import DEVICE
from openapi_check import checked
from test_failures import EXAMPLES, FakeServer, make_worker, sft_input, sft_job
from tuneboard_worker import runner
from tuneboard_worker.model import drop_cache
from tuneboard_worker.runner import Options, Worker
from tuneboard_worker.client import WorkerClient

TWO = EXAMPLES + [{"line": 2, "messages": [{"role": "user", "content": "hey"}, {"role": "assistant", "content": "hello there"}]}]


def run_jobs(models_dir, jobs: list[dict]) -> list[FakeServer]:
    servers = []
    for job in jobs:
        server = FakeServer(sft_input(TWO))
        make_worker(server, models_dir).run_job(job)
        assert server.failed is None and server.completed is not None, server.failed
        servers.append(server)
    return servers


def test_events_carry_the_load_time_and_each_steps_speed(models_dir):
    drop_cache()  # cold: the first job loads the base model
    cold, warm = run_jobs(models_dir, [sft_job(epochs=2), sft_job(epochs=2)])
    for server, cached in ((cold, 0.0), (warm, 1.0)):
        started, *steps = server.events
        assert started["type"] == "training_started"
        data = started["data"]
        assert data["base_model_cached"] == cached
        assert 0 <= data["base_model_load_seconds"] <= data["load_seconds"] < 60
        assert len(steps) == 4 and all(s["type"] == "gradient_step" for s in steps)
        for s in steps:
            d = s["data"]
            assert 0 < d["step_seconds"] < 60
            assert d["tokens_per_second"] == pytest.approx(d["num_trainable_tokens"] / d["step_seconds"])
            assert all(isinstance(v, float) for v in d.values())  # the server takes numbers only
    # Warm, the base model is not loaded again (the cold load reads and builds the model).
    assert warm.events[0]["data"]["base_model_load_seconds"] < cold.events[0]["data"]["base_model_load_seconds"]


def test_a_warm_worker_starts_job_2_from_the_base_weights_not_job_1s_adapter(models_dir, monkeypatch):
    from transformers import AutoModelForCausalLM

    probe = torch.tensor([[151644, 872, 198, 1000, 2000, 3000, 151645]])
    fresh = AutoModelForCausalLM.from_pretrained(models_dir / "tiny-qwen3", dtype=torch.float32)
    fresh.eval()
    with torch.no_grad():
        base_logits = fresh(input_ids=probe).logits

    at_attach: list[torch.Tensor] = []
    at_detach: list[torch.Tensor] = []
    real_attach, real_detach = runner.attach_adapter, runner.detach_adapter

    def logits(model) -> torch.Tensor:
        was = model.training
        model.eval()
        with torch.no_grad():
            # On the worker's device and dtype (bf16 on a GPU); compared on the CPU in float32.
            out = model(input_ids=probe.to(model.device)).logits.float().cpu()
        model.train(was)
        return out

    def attach(*args, **kwargs):
        peft_model = real_attach(*args, **kwargs)
        at_attach.append(logits(peft_model))
        return peft_model

    def detach(peft_model):
        at_detach.append(logits(peft_model))
        real_detach(peft_model)

    monkeypatch.setattr(runner, "attach_adapter", attach)
    monkeypatch.setattr(runner, "detach_adapter", detach)
    drop_cache()
    # A large learning rate: job 1's adapter moves the logits far, so a leftover of it could not go unseen.
    first, second = run_jobs(models_dir, [sft_job(learning_rate=5e-2, epochs=3), sft_job(learning_rate=5e-2, epochs=3)])
    assert second.events[0]["data"]["base_model_cached"] == 1.0  # the same base model object, kept in memory
    # Job 1's fresh adapter sat on the clean base (a new LoRA's B is zero), whose logits are the reference on every
    # device; on the CPU (float32, as loaded here) they are also the fresh model's own.
    if DEVICE.type == "cpu":
        assert torch.allclose(at_attach[0], base_logits, atol=1e-5)
    assert not torch.allclose(at_detach[0], at_attach[0], atol=1e-3)  # job 1 did train
    # Job 2's new adapter sits on the clean base too, not on job 1's adapter.
    assert torch.allclose(at_attach[1], at_attach[0], atol=1e-5)


class LongPollServer:
    """The claim route as a long-polling server: holds a claim up to its wait_seconds, hands out a job when one is
    queued meanwhile (`queue`), then plays the job routes of FakeServer."""

    def __init__(self, job: dict):
        self.jobs = FakeServer(sft_input(TWO))
        self.job = job
        self.queued = threading.Event()
        self.claims: list[dict] = []
        self.claimed_at: float | None = None

    def __call__(self, req: httpx.Request) -> httpx.Response:
        if req.url.path == "/v1/workers/claim":
            body = json.loads(req.content)
            self.claims.append(body)
            if self.claimed_at is None and self.queued.wait(body.get("wait_seconds", 0)):
                self.claimed_at = time.monotonic()
                return httpx.Response(200, json={"job": self.job})
            return httpx.Response(200, json={"job": None})
        if req.url.path == "/v1/workers/sign-off":
            return httpx.Response(200, json={"signed_off": True})
        return self.jobs(req)


def test_a_parked_claim_starts_a_job_queued_meanwhile_at_once(models_dir):
    server = LongPollServer(sft_job())
    options = Options(
        server_url="http://fake", token="t", worker_id="pytest-speed", device=str(DEVICE), models_dir=models_dir, heartbeat_seconds=100, kinds=("sft",), once=True
    )
    worker = Worker(options, WorkerClient("http://fake", "t", "pytest-speed", transport=httpx.MockTransport(checked(server))))
    thread = threading.Thread(target=worker.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.claims and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.3)  # the claim is parked at the server now (it waits up to its wait_seconds)
    queued = time.monotonic()
    server.queued.set()
    thread.join(timeout=120)
    assert not thread.is_alive()
    assert server.claims[0]["wait_seconds"] == runner.CLAIM_WAIT_SECONDS
    assert server.claimed_at is not None and server.claimed_at - queued < 0.2
    assert server.jobs.completed is not None
    # Claimed by the first, parked, claim: no back-off sleep between the job's creation and its start.
    assert len(server.claims) == 1
