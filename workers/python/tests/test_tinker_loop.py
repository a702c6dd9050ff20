"""The worker's side of the Tinker protocol (docs/tinker.md §3.2–3.3) without a server: the HTTP calls' routes and
bodies against httpx.MockTransport, and the poll loop against an in-memory fake of the worker client."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from conftest import DEVICE
from openapi_check import checked

from tinker_util import BASE, LORA, datum, token_rows
from tuneboard_worker.client import LeaseLost, WorkerClient
from tuneboard_worker.runner import Options, Worker
from tuneboard_worker.tinker import ops

# --- the HTTP calls ---------------------------------------------------------------------------------------------


class Recorder:
    def __init__(self, answer=lambda req: httpx.Response(200, json={"ok": True})):
        self.requests: list[httpx.Request] = []
        self.answer = answer

    def __call__(self, req: httpx.Request) -> httpx.Response:
        self.requests.append(req)
        return self.answer(req)


def make_client(recorder: Recorder) -> WorkerClient:
    return WorkerClient("http://fake", "tok", "w-1", transport=httpx.MockTransport(checked(recorder)), sleep=lambda s: None)


# Training clients and requests are uuids on the server: the routes' schemas refuse anything else (openapi_check).
M1, M9 = "00000000-0000-4000-8000-0000000000a1", "00000000-0000-4000-8000-0000000000a9"
R1, R2, R3, R4 = (f"00000000-0000-4000-8000-00000000000{i}" for i in range(1, 5))


def tinker_answer(req: httpx.Request) -> httpx.Response:
    """What the server answers each Tinker worker route (their response schemas in the OpenAPI document)."""
    p = req.url.path
    if p.endswith("/poll"):
        return httpx.Response(200, json={"requests": [], "drop": [M9], "lease_seconds": 60})
    if p.endswith("/heartbeat"):
        return httpx.Response(200, json={"drop": [M9]})
    if "/files/" in p and req.method == "PUT":
        return httpx.Response(200, json={"size": len(req.content)})
    if "/files/" in p:
        return httpx.Response(200, content=b"{}", headers={"content-type": "application/octet-stream"})
    return httpx.Response(200, json={"ok": True})


def test_the_tinker_calls_use_the_routes_and_bodies_of_the_design():
    rec = Recorder(tinker_answer)
    client = make_client(rec)
    assert client.tinker_poll({"backends": ["hf"]}, {"hostname": "h"}, [M1], True, 2500) == {"requests": [], "drop": [M9], "lease_seconds": 60}
    assert client.tinker_heartbeat([M1]) == [M9]
    client.tinker_result(R1, result={})
    client.tinker_result(R2, error={"message": "no", "category": "user"})
    client.tinker_put_file(R3, "adapter_model.safetensors", b"\x00\x01")
    client.tinker_get_file(R4, "adapter_config.json")
    poll, beat, ok, failed, put, get = rec.requests
    assert (poll.method, poll.url.path) == ("POST", "/v1/workers/tinker/poll")
    assert json.loads(poll.content) == {
        "worker_id": "w-1",
        "capabilities": {"backends": ["hf"]},
        "info": {"hostname": "h"},
        "held": [M1],
        "accept_new": True,
        "wait_ms": 2500,
    }
    # The long poll's read timeout outlasts the wait.
    assert poll.extensions["timeout"]["read"] > 2.5
    assert (beat.url.path, json.loads(beat.content)) == ("/v1/workers/tinker/heartbeat", {"worker_id": "w-1", "held": [M1]})
    assert (ok.url.path, json.loads(ok.content)) == (f"/v1/workers/tinker/requests/{R1}/result", {"worker_id": "w-1", "result": {}})
    assert json.loads(failed.content) == {"worker_id": "w-1", "error": {"message": "no", "category": "user"}}
    assert (put.method, put.url.path, put.url.params["worker_id"], put.content) == (
        "PUT",
        f"/v1/workers/tinker/requests/{R3}/files/adapter_model.safetensors",
        "w-1",
        b"\x00\x01",
    )
    assert (get.method, get.url.path, get.url.params["worker_id"]) == ("GET", f"/v1/workers/tinker/requests/{R4}/files/adapter_config.json", "w-1")
    assert all(r.headers["authorization"] == "Bearer tok" for r in rec.requests)


def test_a_result_is_retried_through_5xx_and_a_409_is_lease_lost():
    answers = [503, 502, 200, 409]
    rec = Recorder(lambda req: httpx.Response(status := answers.pop(0), json={"ok": True} if status == 200 else {"detail": "no"}))
    client = make_client(rec)
    client.tinker_result(R1, result={"x": 1})
    assert len(rec.requests) == 3
    with pytest.raises(LeaseLost):
        client.tinker_result(R1, result={"x": 1})


# --- the loop ---------------------------------------------------------------------------------------------------


class FakeClient:
    """The worker client's Tinker calls and claims, in memory. `polls` is a script: each poll takes the next answer
    (a dict, or a callable of the poll's arguments); past its end, polls answer nothing and stop the worker."""

    def __init__(self, polls: list[Any], *, on_idle=None, result_status=None):
        self.polls = list(polls)
        self.poll_args: list[dict[str, Any]] = []
        self.log: list[tuple] = []  # ("put", request_id, file) / ("result", request_id, answer) / ("claim",)
        self.files: dict[tuple[str, str], bytes] = {}
        self.heartbeats: list[list[str]] = []
        self.heartbeat_answer: list[str] = []
        self.on_idle = on_idle
        self.result_status = result_status or {}
        self.tinker_retry_seconds = 60.0

    def tinker_poll(self, capabilities, info, held, accept_new, wait_ms, kinds=None):
        self.poll_args.append({"held": list(held), "accept_new": accept_new, "wait_ms": wait_ms})
        if not self.polls:
            if self.on_idle:
                self.on_idle()
            return {"requests": [], "drop": []}
        answer = self.polls.pop(0)
        return answer(held) if callable(answer) else answer

    def tinker_heartbeat(self, held):
        self.heartbeats.append(list(held))
        return list(self.heartbeat_answer)

    def tinker_result(self, request_id, result=None, error=None):
        if self.result_status.get(request_id) == 409:
            raise LeaseLost("POST", "result", 409, "not yours")
        # Through JSON, as httpx sends it: an answer with a numpy or torch number would fail here.
        answer = json.loads(json.dumps({"result": result} if error is None else {"error": error}, allow_nan=False))
        self.log.append(("result", request_id, answer))

    def tinker_put_file(self, request_id, file, data):
        self.log.append(("put", request_id, file))
        self.files[(request_id, file)] = data

    def tinker_get_file(self, request_id, file):
        return self.files[("save", file)]

    def claim(self, kinds, capabilities, info=None, model_ids=None, wait_seconds=0.0):
        self.log.append(("claim", tuple(kinds)))
        return None

    def sign_off(self):
        self.signed_off = True
        return True

    def close(self):
        pass

    def results(self) -> dict[str, list[dict]]:
        out: dict[str, list[dict]] = {}
        for entry in self.log:
            if entry[0] == "result":
                out.setdefault(entry[1], []).append(entry[2])
        return out


def make_worker(models_dir: Path, fake: FakeClient, **opts) -> Worker:
    options = Options(**{"server_url": "http://fake", "token": "t", "worker_id": "w-loop", "device": str(DEVICE), "models_dir": models_dir, "poll_max_seconds": 0.01, **opts})
    worker = Worker(options, fake)  # type: ignore[arg-type]
    if fake.on_idle is None:
        fake.on_idle = worker.stop.set
    return worker


def request(request_id: str, kind: str, model_id: str = "m1", payload: dict | None = None, seq_id: int | None = None) -> dict:
    return {"request_id": request_id, "model_id": model_id, "seq_id": seq_id, "kind": kind, "payload": payload or {}}


CREATE = {"base_model": BASE, "base_model_path": "tiny-qwen3", "lora": LORA}


def fb_payload(seed: int) -> dict:
    rows = token_rows(seed, [5, 7])
    return {"loss_fn": "cross_entropy", "loss_fn_config": None, "data": [datum(r[:-1], target_tokens=r[1:]) for r in rows]}


def only(reqs: list[dict]) -> dict:
    return {"requests": reqs, "drop": []}


def test_a_redelivered_request_is_answered_from_the_cache_and_not_run_twice(models_dir, monkeypatch):
    runs: list[str] = []
    real_forward = ops.forward

    def counting(pool, client, payload, **kw):
        runs.append(client.model_id)
        return real_forward(pool, client, payload, **kw)

    monkeypatch.setattr(ops, "forward", counting)
    fb = request("r2", "forward_backward", payload=fb_payload(1), seq_id=2)
    fake = FakeClient([only([request("r1", "create_model", payload=CREATE, seq_id=1)]), only([fb]), only([fb]), only([request("r3", "unload_model", seq_id=3)])])
    worker = make_worker(models_dir, fake)
    worker.run()
    results = fake.results()
    assert results["r1"][0]["result"]["target_modules"][-1] == "lm_head"
    assert results["r1"][0]["result"]["trainable_parameters"] > 0
    assert runs == ["m1"]  # forward_backward ran once
    assert results["r2"][0] == results["r2"][1] and "loss:sum" in results["r2"][0]["result"]["metrics"]
    assert results["r3"] == [{"result": {}}]
    assert worker.tinker is not None and worker.tinker.pool.clients == {} and worker.tinker.pool.bases == {}
    # While it held the training client it long-polled (10 s) and claimed no job.
    held_polls = [p for p in fake.poll_args if p["held"] == ["m1"]]
    assert held_polls and all(p["wait_ms"] == 10_000 for p in held_polls)
    first_held = next(i for i, e in enumerate(fake.log) if e[0] == "result" and e[1] == "r1")
    last_held = max(i for i, e in enumerate(fake.log) if e[0] == "result" and e[1] == "r3")
    assert not any(e[0] == "claim" for e in fake.log[first_held:last_held])
    assert any(e[0] == "claim" for e in fake.log[:first_held]) and fake.log[0] == ("claim", ("rl", "sft", "tinker"))


def test_an_unload_handed_over_again_after_the_client_is_gone_answers_the_same(models_dir):
    unload = request("r2", "unload_model")
    fake = FakeClient([only([request("r1", "create_model", payload=CREATE)]), only([unload]), only([unload])])
    make_worker(models_dir, fake).run()
    assert fake.results()["r2"] == [{"result": {}}, {"result": {}}]


def test_drop_frees_a_client_and_a_request_for_a_client_not_held_fails_saying_the_state_is_lost(models_dir):
    fake = FakeClient(
        [
            only([request("r1", "create_model", payload=CREATE)]),
            {"requests": [], "drop": ["m1"]},
            only([request("r2", "optim_step", payload={"adam_params": {"learning_rate": 0.1}})]),
        ]
    )
    worker = make_worker(models_dir, fake)
    worker.run()
    assert worker.tinker.pool.clients == {} and worker.tinker.pool.bases == {}
    (answer,) = fake.results()["r2"]
    assert answer["error"]["category"] == "server"
    assert "not held by worker w-loop" in answer["error"]["message"] and "save_state" in answer["error"]["message"]
    assert fake.poll_args[2]["held"] == []


def test_save_uploads_the_files_before_the_result_and_load_fetches_them(models_dir):
    fake = FakeClient(
        [
            only([request("r1", "create_model", payload=CREATE)]),
            only([request("r2", "forward_backward", payload=fb_payload(2))]),
            only([request("r3", "optim_step", payload={"adam_params": {"learning_rate": 0.01}})]),
            only([request("save", "save_weights", payload={"name": "s1"})]),
            only([request("r5", "create_model", model_id="m2", payload=CREATE), request("r6", "save_weights_for_sampler", payload={"name": "x"})]),
            only([request("r7", "load_weights", model_id="m2", payload={"optimizer": True, "files": ["adapter_config.json", "adapter_model.safetensors", "optimizer.safetensors"]})]),
        ]
    )
    worker = make_worker(models_dir, fake)
    fake.on_idle = None
    fake.polls.append(lambda held: (worker.stop.set(), only([]))[1])
    worker.run()
    puts = [i for i, e in enumerate(fake.log) if e[0] == "put" and e[1] == "save"]
    result_at = next(i for i, e in enumerate(fake.log) if e[0] == "result" and e[1] == "save")
    assert len(puts) == 3 and max(puts) < result_at
    saved = fake.results()["save"][0]["result"]["files"]
    assert [f["name"] for f in saved] == ["adapter_config.json", "adapter_model.safetensors", "optimizer.safetensors"]
    assert all(f["size"] == len(fake.files[("save", f["name"])]) for f in saved)
    assert [e[2] for e in fake.log if e[0] == "put" and e[1] == "r6"] == ["adapter_config.json", "adapter_model.safetensors"]
    assert fake.results()["r7"] == [{"result": {}}]
    # Two clients held at the end; the worker stopped, so both were freed (their state is lost).
    assert worker.tinker.pool.clients == {}


def test_a_409_on_the_result_frees_the_client(models_dir):
    fake = FakeClient(
        [only([request("r1", "create_model", payload=CREATE)]), only([request("r2", "forward", payload=fb_payload(3))]), only([])],
        result_status={"r2": 409},
    )
    worker = make_worker(models_dir, fake)
    worker.run()
    assert fake.poll_args[2]["held"] == []


def test_heartbeats_run_while_a_long_request_runs_and_their_drops_apply_after_it(models_dir, monkeypatch):
    def slow_step(client, payload):
        fake.heartbeat_answer = ["m1"]  # the server fails m1 meanwhile (a heartbeat's drop)
        time.sleep(0.5)
        return {"metrics": {}, "stats": {}}

    monkeypatch.setattr(ops, "optim_step", slow_step)
    fake = FakeClient(
        [
            only([request("r1", "create_model", payload=CREATE)]),
            only([request("r2", "optim_step", payload={"adam_params": {}}), request("r3", "forward", payload=fb_payload(4))]),
        ]
    )
    worker = make_worker(models_dir, fake, heartbeat_seconds=0.1)
    worker.run()
    during_step = [h for h in fake.heartbeats if h == ["m1"]]
    assert len(during_step) >= 2
    # The drop came during r2: r2 finished and was answered, then the client was freed before r3.
    assert "result" in fake.results()["r2"][0]
    assert fake.results()["r3"][0]["error"]["category"] == "server"
    assert worker.tinker.pool.clients == {}


def test_sigterm_finishes_the_current_request_and_stops_polling(models_dir, caplog):
    fake = FakeClient([only([request("r1", "create_model", payload=CREATE)]), only([request("r2", "forward", payload=fb_payload(5)), request("r3", "forward", payload=fb_payload(6))])])
    worker = make_worker(models_dir, fake)
    real_post = worker.tinker._post

    def post_then_stop(req, answer):
        real_post(req, answer)
        if req["request_id"] == "r2":
            worker.stop.set()  # what the SIGTERM handler does

    worker.tinker._post = post_then_stop  # type: ignore[method-assign]
    with caplog.at_level("WARNING", logger="tuneboard_worker"):
        worker.run()
    assert set(fake.results()) == {"r1", "r2"} and len(fake.poll_args) == 2
    assert "their state in memory is lost" in caplog.text and "m1" in caplog.text


def test_without_tinker_in_kinds_the_worker_never_polls_for_training_clients(models_dir):
    fake = FakeClient([])
    worker = make_worker(models_dir, fake, kinds=("rl", "sft"), exit_when_idle=0.05)
    worker.run()
    assert worker.tinker is None and fake.poll_args == [] and fake.log and all(e == ("claim", ("rl", "sft")) for e in fake.log)


def test_idle_the_worker_long_polls_with_the_claim_backoff_and_admits_up_to_the_maximum(models_dir):
    fake = FakeClient(
        [
            only([]),
            only([]),
            only([request("r1", "create_model", payload=CREATE)]),
            only([request("r2", "create_model", model_id="m2", payload=CREATE)]),
            only([]),
        ]
    )
    worker = make_worker(models_dir, fake, max_training_clients=2, poll_max_seconds=1.0)
    worker.run()
    waits = [p["wait_ms"] for p in fake.poll_args]
    assert waits[:3] == [250, 500, 1000]  # the claim's back-off, doubling, as the long poll's wait
    assert waits[3:] and all(w == 10_000 for w in waits[3:])  # holding clients: the long wait
    accepts = [p["accept_new"] for p in fake.poll_args]
    assert accepts[:4] == [True] * 4 and accepts[4:] and not any(accepts[4:])  # two held: no room for a third
    assert fake.poll_args[-1]["held"] == ["m1", "m2"]


def test_a_bad_request_is_a_user_error_and_the_worker_carries_on(models_dir):
    bad = fb_payload(7)
    bad["data"][0] = datum(np.array([1, 999_999]), target_tokens=np.array([2, 3]))
    fake = FakeClient([only([request("r1", "create_model", payload=CREATE)]), only([request("r2", "forward_backward", payload=bad)]), only([request("r3", "forward", payload=fb_payload(8))])])
    make_worker(models_dir, fake).run()
    (answer,) = fake.results()["r2"]
    assert answer["error"] == {
        "message": "datum 0: token 999999 at position 1 is outside the vocabulary of test/tiny-qwen3 (151669 tokens)",
        "category": "user",
    }
    assert "result" in fake.results()["r3"][0]


def test_a_missing_model_directory_fails_create_model_as_a_server_problem(models_dir):
    fake = FakeClient([only([request("r1", "create_model", payload={**CREATE, "base_model_path": "no-such-model"})])])
    worker = make_worker(models_dir, fake)
    worker.run()
    (answer,) = fake.results()["r1"]
    assert answer["error"]["category"] == "server" and "does not exist on this worker" in answer["error"]["message"]
    assert worker.tinker.pool.bases == {}


def test_a_server_without_the_tinker_routes_turns_them_off_and_jobs_go_on(models_dir):
    from tuneboard_worker.client import ProtocolError

    fake = FakeClient([])

    def not_found(*args):
        fake.poll_args.append({})
        raise ProtocolError("POST", "/v1/workers/tinker/poll", 404, "Not Found")

    fake.tinker_poll = not_found  # type: ignore[method-assign]
    worker = make_worker(models_dir, fake, exit_when_idle=0.1)
    worker.run()
    assert worker.tinker is None and len(fake.poll_args) == 1
    assert sum(1 for e in fake.log if e[0] == "claim") > 1


def test_a_stop_signal_during_the_long_poll_ends_the_wait_at_once(models_dir):
    """SIGTERM while the worker only waits on the server ends the wait then, not when the poll comes back (up to
    TINKER_WAIT_MS later, or never while the server drains its requests)."""
    import os
    import signal

    def hang(held):
        os.kill(os.getpid(), signal.SIGTERM)  # the handler runs in this (main) thread, inside the wait
        time.sleep(30)
        raise AssertionError("the wait was not interrupted")

    fake = FakeClient([only([request("r1", "create_model", payload=CREATE, seq_id=1)]), hang])
    worker = make_worker(models_dir, fake)
    saved = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    worker.install_signal_handlers()
    try:
        started = time.monotonic()
        worker.run()
        assert time.monotonic() - started < 10
    finally:
        for s, handler in saved.items():
            signal.signal(s, handler)
    assert worker.stop.is_set() and not worker.stop_now.is_set()
    assert fake.results()["r1"][0]["result"]["trainable_parameters"] > 0  # the request before it was finished


def test_a_stop_signal_while_a_request_runs_lets_it_finish(models_dir, monkeypatch):
    import os
    import signal

    real_forward = ops.forward

    def signalled(pool, client, payload, **kw):
        os.kill(os.getpid(), signal.SIGTERM)  # outside the poll's wait: the request runs to its end
        return real_forward(pool, client, payload, **kw)

    monkeypatch.setattr(ops, "forward", signalled)
    fb = request("r2", "forward_backward", payload=fb_payload(1), seq_id=2)
    fake = FakeClient([only([request("r1", "create_model", payload=CREATE, seq_id=1)]), only([fb])])
    worker = make_worker(models_dir, fake)
    saved = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    worker.install_signal_handlers()
    try:
        worker.run()
    finally:
        for s, handler in saved.items():
            signal.signal(s, handler)
    assert "result" in fake.results()["r2"][0], fake.results()["r2"]
