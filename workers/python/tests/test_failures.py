"""Jobs the worker cannot run fail promptly, with a message the user can act on, and the worker carries on.

No Tuneboard server here: a fake one (httpx.MockTransport) answers the worker routes and records what the worker
reports, and the client's retry back-off runs on a fake clock, so the retry cases take no wall time.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from conftest import DEVICE
from openapi_check import NOT_THE_SERVER, checked
from tuneboard_worker.client import WorkerClient
from tuneboard_worker.model import drop_cache
from tuneboard_worker.runner import Options, TokenRefused, Worker

EXAMPLES = [{"line": 1, "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]}]


class FakeServer:
    """The worker routes for one job at a time; `down(path)` makes a call fail as a connection error."""

    def __init__(self, job_input: dict, upload_status: int = 200, down=lambda path: False):
        self.job_input = job_input
        self.upload_status = upload_status
        self.down = down
        self.events: list[dict] = []
        self.failed: str | None = None
        self.completed: dict | None = None

    def __call__(self, req: httpx.Request) -> httpx.Response:
        p = req.url.path
        if self.down(p):
            raise httpx.ConnectError("connection refused", request=req)
        if p.endswith("/heartbeat"):
            return httpx.Response(200, json={"cancelled": False})
        if p.endswith("/input"):
            return httpx.Response(200, json=self.job_input)
        if p.endswith("/weights"):
            return httpx.Response(204)
        if p.endswith("/events"):
            events = json.loads(req.content)["events"]
            self.events += events
            return httpx.Response(200, json={"appended": len(events)})
        if p.endswith("/checkpoint"):
            if self.upload_status != 200:
                if self.upload_status == 422:  # pydantic's form, as the server's validation errors
                    detail: object = [{"loc": ["query", "file"], "msg": "refused by the test", "type": "value_error"}]
                else:
                    detail = "refused by the test"
                return httpx.Response(self.upload_status, json={"detail": detail})
            return httpx.Response(200, json={"artifact_key": "models/m/checkpoints/j/adapter_model.safetensors"})
        if p.endswith("/complete"):
            self.completed = json.loads(req.content)
            return httpx.Response(200, json={"step": 1})
        if p.endswith("/fail"):
            self.failed = json.loads(req.content)["error_message"]
            return httpx.Response(200, json={"failed": True})
        return httpx.Response(404)


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def sleep(self, s: float) -> None:
        self.now += s

    def __call__(self) -> float:
        return self.now


def make_worker(server: FakeServer, models_dir: Path, clock: FakeClock | None = None, **opts) -> Worker:
    clock = clock or FakeClock()
    # Heartbeats every 100 s: none during these short jobs, so only the training thread talks to the fake.
    options = Options(server_url="http://fake", token="t", worker_id="pytest-failures", device=str(DEVICE), models_dir=models_dir, heartbeat_seconds=100, **opts)
    client = WorkerClient("http://fake", "t", "pytest-failures", transport=httpx.MockTransport(checked(server)), sleep=clock.sleep, clock=clock)
    return Worker(options, client)


def sft_input(examples: list[dict]) -> dict:
    """The input route's answer for an SFT job (its schema in the OpenAPI document)."""
    return {"kind": "sft", "file": "train.jsonl", "examples": examples, "validation": []}


def rl_input(groups: list[dict]) -> dict:
    return {"kind": "rl", "trajectory_groups": groups}


def sft_job(path: str | None = "tiny-qwen3", base_model: str = "test/tiny-qwen3", **config) -> dict:
    """A claim's job, as the claim route answers it."""
    return {
        "id": "00000000-0000-4000-8000-000000000001",
        "kind": "sft",
        "model_id": "00000000-0000-4000-8000-0000000000d1",
        "attempts": 1,
        "backend": "hf",
        "base_model": base_model,
        "base_model_path": path,
        "lease_seconds": 60,
        "config": {"batch_size": 1, "learning_rate": 1e-3, "epochs": 1, **config},
        "base_checkpoint": None,
    }


def run(job: dict, models_dir: Path, **kw) -> tuple[FakeServer, float]:
    server = FakeServer(sft_input(EXAMPLES), **{k: v for k, v in kw.items() if k in ("upload_status", "down")})
    if "job_input" in kw:
        server.job_input = kw["job_input"]
    worker = make_worker(server, models_dir, **{k: v for k, v in kw.items() if k in ("max_seq_len_override", "hf_cache")})
    t = time.monotonic()
    worker.run_job(job)
    return server, time.monotonic() - t


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_hub_model_missing_from_the_cache_fails_in_seconds_when_the_hub_is_unreachable(models_dir, tmp_path, monkeypatch):
    # Before: huggingface_hub retried each file with back-off, about 50 s with DNS failing at once (minutes
    # where packets are dropped), before the job failed.
    from huggingface_hub import constants

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "ENDPOINT", f"http://127.0.0.1:{_closed_port()}")
    server, took = run(sft_job(path=None, base_model="nobody/not-in-the-cache"), models_dir, hf_cache=str(tmp_path / "hf-cache"))
    assert took < 20
    assert server.failed is not None and server.completed is None and server.events == []
    assert "is not in the Hugging Face cache" in server.failed and "cannot be reached" in server.failed
    assert "hf download" in server.failed


def _broken_copy(models_dir: Path, tmp_path: Path, how: str) -> Path:
    d = tmp_path / f"broken-{how}"
    shutil.copytree(models_dir / "tiny-qwen3", d)
    if how == "config-not-json":
        (d / "config.json").write_text("{not json")
    elif how == "unknown-model-type":
        config = json.loads((d / "config.json").read_text())
        config["model_type"] = "no-such-architecture"
        (d / "config.json").write_text(json.dumps(config))
    elif how == "no-tokenizer":
        (d / "tokenizer.json").unlink()
        (d / "tokenizer_config.json").unlink()
    elif how == "no-weights":
        (d / "model.safetensors").unlink()
    return d


@pytest.mark.parametrize(
    "how, says",
    [
        ("config-not-json", "is not a valid JSON file"),
        # Before: "internal error (ValueError: …)".
        ("unknown-model-type", "no-such-architecture"),
        # Before: "has no chat template" (Transformers built an empty tokenizer from config.json's model_type).
        ("no-tokenizer", "has no tokenizer"),
        ("no-weights", "no file named model.safetensors"),
    ],
)
def test_a_broken_model_directory_fails_the_job_saying_what_is_wrong(models_dir, tmp_path, how, says):
    d = _broken_copy(models_dir, tmp_path, how)
    server, took = run(sft_job(path=str(d)), models_dir)
    assert server.failed is not None and says in server.failed, server.failed
    assert "internal error" not in server.failed
    assert server.events == [] and took < 30


def test_unknown_lora_target_modules_fail_the_job_and_the_next_job_trains(models_dir):
    # Before: "internal error (NoMatchingPeftModuleError: …)". The server cannot check the names: it does not
    # know the architecture.
    drop_cache()
    server, _ = run(sft_job(lora={"target_modules": ["no_such_proj"]}), models_dir)
    assert server.failed is not None and "lora_target_modules" in server.failed and "q_proj" in server.failed
    assert "internal error" not in server.failed
    server, _ = run(sft_job(), models_dir)
    assert server.failed is None and server.completed is not None
    assert [e["type"] for e in server.events] == ["training_started", "gradient_step"]


def test_lora_target_modules_with_one_unknown_name_fail_the_job_naming_it_and_the_next_job_trains(models_dir):
    # Before: PEFT raises only when no entry matches, so ["q_proj", "v_prj"] trained q_proj alone, and the job
    # succeeded with fewer LoRA layers than asked.
    from tuneboard_worker import model

    drop_cache()
    server, _ = run(sft_job(lora={"target_modules": ["q_proj", "v_prj"]}), models_dir)
    assert server.failed is not None, "the job trained"
    assert server.failed.startswith("lora_target_modules entries that name no layer of this base model: 'v_prj'."), server.failed
    assert "v_proj" in server.failed and "internal error" not in server.failed
    assert server.events == [] and server.completed is None
    # Refused before the model was touched: the cached base has no LoRA layer, the next job trains on it.
    cached = model._cache
    assert cached is not None and not any("lora" in n for n, _ in cached.model.named_modules())
    server, _ = run(sft_job(lora={"target_modules": ["q_proj", "self_attn.v_proj"]}), models_dir)
    assert server.failed is None and server.completed is not None
    assert model._cache is cached


@pytest.mark.parametrize("status, says", [(413, "too large"), (500, "answered 500"), (422, "answered 422")])
def test_a_checkpoint_upload_the_server_refuses_fails_the_job_with_the_servers_answer(models_dir, status, says):
    # Before (5xx/4xx other than 413): "Training failed with an internal error (ProtocolError: …)".
    server, _ = run(sft_job(), models_dir, upload_status=status)
    assert server.failed is not None and says in server.failed and "internal error" not in server.failed
    assert server.completed is None


def _down_after_first_step(server_box: list, calls: int):
    """Event posts after the first gradient_step fail `calls` times (a server restart), then succeed."""
    left = [calls]

    def down(path: str) -> bool:
        server = server_box[0]
        if path.endswith("/events") and any(e["type"] == "gradient_step" for e in server.events) and left[0] > 0:
            left[0] -= 1
            return True
        return False

    return down


def test_a_server_away_for_less_than_the_lease_does_not_fail_the_job(models_dir):
    # 9 failed tries of one call: 40 s of back-off (fake clock), past the client's 6 retries (16 s), which
    # failed the job before although the server still held it (lease 60 s).
    box: list = []
    server = FakeServer(sft_input(EXAMPLES * 3), down=_down_after_first_step(box, 9))
    box.append(server)
    make_worker(server, models_dir).run_job(sft_job())
    assert server.failed is None and server.completed is not None
    assert [e["type"] for e in server.events] == ["training_started"] + ["gradient_step"] * 3


def test_a_server_away_for_longer_than_the_lease_fails_the_job_saying_so(models_dir):
    box: list = []
    server = FakeServer(sft_input(EXAMPLES * 3), down=_down_after_first_step(box, 1000))
    box.append(server)
    worker = make_worker(server, models_dir)
    worker.run_job(sft_job())  # returns: the worker goes on to claim the next job
    assert server.failed is not None and "could not reach the Tuneboard server" in server.failed
    assert server.completed is None


def test_a_server_that_accepts_but_never_answers_holds_a_heartbeat_for_seconds_not_minutes():
    # Before: every call waited 600 s for an answer (sized for uploads), 70 minutes with the retries, so a hung
    # server held the heartbeat thread, and the training loop at its next event, far past the job's lease.
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)  # connections complete in the backlog; nothing ever reads or answers them
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def hold():
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])
            except OSError:
                pass

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    try:
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        client = WorkerClient(url, "t", "pytest-failures", retries=1, call_timeout=0.5, sleep=lambda s: None)
        t = time.monotonic()
        with pytest.raises(httpx.ReadTimeout):
            client.heartbeat("job-1")
        assert time.monotonic() - t < 5
        client.close()
    finally:
        stop.set()
        holder.join()
        for c in accepted:
            c.close()
        listener.close()


class FakeClaims:
    """The claim route alone: each claim gets the next of `answers` (a status, or "down" for a connection error),
    then no job."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.calls = 0
        self.signed_off: list[str] = []

    def __call__(self, req: httpx.Request) -> httpx.Response:
        if req.url.path == "/v1/workers/sign-off":
            self.signed_off.append(json.loads(req.content)["worker_id"])
            return httpx.Response(200, json={"signed_off": True})
        assert req.url.path == "/v1/workers/claim"
        self.calls += 1
        answer = self.answers.pop(0) if self.answers else 200
        if answer == "down":
            raise httpx.ConnectError("connection refused", request=req)
        if answer == 403:
            # The server answers a wrong token 401; a 403 comes from a proxy in front of it.
            return httpx.Response(answer, text="Forbidden", headers=NOT_THE_SERVER)
        if answer != 200:
            return httpx.Response(answer, json={"detail": "Not authenticated"})
        return httpx.Response(200, json={"job": None})


@pytest.mark.parametrize("status", [401, 403])
def test_a_refused_worker_token_stops_the_worker_saying_which_setting_gives_it(models_dir, status):
    # Before: "claim failed: … answered 401" was logged and the claim retried, forever (here: until idle).
    claims = FakeClaims(status)
    worker = make_worker(claims, models_dir, exit_when_idle=1.0)
    with pytest.raises(TokenRefused) as refused:
        worker.run()
    assert claims.calls == 1
    message = str(refused.value)
    assert "refused the worker token" in message and str(status) in message
    assert "TUNEBOARD_WORKER_TOKEN" in message and "--token" in message and "http://fake" in message


@pytest.mark.parametrize("away", ["down", 503])
def test_a_server_away_at_claim_time_is_polled_until_it_answers(models_dir, away):
    # 7 tries: the client's own retries (fake clock) give up, the worker logs it and claims again.
    claims = FakeClaims(*[away] * 7)
    make_worker(claims, models_dir, exit_when_idle=0.3).run()  # returns: idle, not refused
    assert claims.calls > 7 and claims.answers == []


def test_a_worker_that_stops_signs_off_once(models_dir):
    # So that a job only it could train says at once that no worker is connected, not after the live window.
    claims = FakeClaims()
    make_worker(claims, models_dir, exit_when_idle=0.3).run()
    assert claims.signed_off == ["pytest-failures"]


def test_the_cli_exits_non_zero_at_once_when_the_server_refuses_its_token():
    claims: list[str] = []

    class Refuse(BaseHTTPRequestHandler):
        def do_POST(self):
            claims.append(self.path)
            body = b'{"detail":"Not authenticated"}'
            self.send_response(401)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Refuse)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        env = {**os.environ, "OMP_NUM_THREADS": "1", "TUNEBOARD_WORKER_TOKEN": "mistyped"}
        cmd = [sys.executable, "-m", "tuneboard_worker", "--server-url", f"http://127.0.0.1:{server.server_address[1]}", "--device", "cpu", "--gpus", "none"]
        # Before: it polled forever (the timeout fails the test).
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    finally:
        server.shutdown()
        server.server_close()
    assert done.returncode == 2, done.stderr
    assert claims == ["/v1/workers/claim"]
    assert "refused the worker token" in done.stderr and "TUNEBOARD_WORKER_TOKEN (or --token)" in done.stderr


def _rl_job(**config) -> dict:
    from conftest import RL_CONFIG_DEFAULTS

    job = sft_job()
    job["kind"] = "rl"
    job["config"] = {**RL_CONFIG_DEFAULTS, **config}
    return job


CHOICE = {"message": {"role": "assistant", "content": "x"}, "finish_reason": "stop"}


def _group(first: list[dict]) -> dict:
    second = [{"role": "user", "content": "q"}, CHOICE]
    return {"trajectories": [{"reward": 1, "messages_and_choices": first}, {"reward": 0, "messages_and_choices": second}]}


@pytest.mark.parametrize(
    "history, says",
    [
        ([{"role": "assistant", "content": "hi"}, {"role": "user", "content": "q"}, CHOICE], "group 1, trajectory 1: message 1 is an assistant message"),
        ([{"role": "user", "content": {"not": "text"}}, CHOICE], "group 1, trajectory 1: the chat template cannot render this conversation"),
    ],
)
def test_rl_histories_the_chat_template_cannot_take_fail_the_job_naming_the_trajectory(models_dir, history, says):
    server, _ = run(_rl_job(allow_training_without_logprobs=True), models_dir, job_input=rl_input([_group(history)]))
    assert server.failed is not None and server.failed.startswith(says), server.failed
    assert server.events == [] and server.completed is None


def test_an_rl_job_with_no_trainable_token_completes_with_no_step(models_dir):
    # docs/contract.md §2.7: nothing trainable (here: no logprobs, and training without them not allowed) is not an
    # error; the job completes with num_sequences 0 and the group counts, as the built-in engine does.
    server, _ = run(_rl_job(), models_dir, job_input=rl_input([_group([{"role": "user", "content": "q"}, CHOICE])]))
    assert server.failed is None and server.completed is not None
    assert [e["type"] for e in server.events] == ["training_started"] and server.events[0]["data"]["num_sequences"] == 0
