"""Fixtures for the worker's tests: tiny random Hugging Face models built by the repository's script (no
weights are committed, nothing is downloaded) and a real Tuneboard server started for the session.

The server is the production build when one exists (`npm run build`; what `npm test` runs after building),
else `next dev`. TUNEBOARD_TEST_SERVER_URL points the tests at a server that is already running instead (it must
have the base-models file written by this fixture and the same worker token). Every test creates its own user.

Tests that use that server (through the `server` fixture, directly or not) carry the `server` marker, so that
`-m "not server"` runs the rest where there is no Node.js (a GPU machine: scripts/device-check.sh). The tests that
train put their models on TUNEBOARD_TEST_DEVICE (cpu by default and in CI; cuda under the device check).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import torch

import openapi_check

torch.set_num_threads(1)
import pytest

REPO = Path(__file__).resolve().parents[3]
WORKER_DIR = REPO / "workers" / "python"
WORKER_TOKEN = "pytest-worker-token-" + uuid.uuid4().hex[:8]
# Where the training tests put their models (see the docstring). Tests that compare with a model they load
# themselves on the CPU move results there; the two-rank FSDP tests stay on CPU ranks (gloo) whatever this says.
DEVICE = torch.device(os.environ.get("TUNEBOARD_TEST_DEVICE") or "cpu")
# Long enough that a heartbeat thread starved by a loaded CI machine does not lose its job.
LEASE_SECONDS = 20


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", "server: starts (or needs) the Tuneboard server, hence Node.js: the server fixture")


def pytest_collection_modifyitems(config, items) -> None:
    # fixturenames is the closure (api → server, Tinker's tw → server), so no test can forget the marker.
    for item in items:
        if "server" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.server)


@pytest.fixture(autouse=True)
def openapi_contract():
    """Fails a test in which a fake server wrapped in openapi_check.checked saw a request or gave an answer the
    server's OpenAPI document does not allow, even where the worker caught the error (a job that failed with it)."""
    openapi_check.VIOLATIONS.clear()
    yield openapi_check.VIOLATIONS
    assert not openapi_check.VIOLATIONS, "calls outside the OpenAPI document:\n" + "\n".join(openapi_check.VIOLATIONS)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def build_tiny_model(arch: str, out: Path) -> Path:
    if not (out / "config.json").exists():
        subprocess.run(
            [sys.executable, str(REPO / "scripts" / "make-tiny-hf-model.py"), "--arch", arch, "--out", str(out)],
            check=True,
            capture_output=True,
            env={**os.environ, "OMP_NUM_THREADS": "1"},
        )
    return out


@pytest.fixture(scope="session")
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("tuneboard")


@pytest.fixture(scope="session")
def models_dir(workdir: Path) -> Path:
    d = workdir / "models"
    build_tiny_model("qwen3", d / "tiny-qwen3")
    return d


@pytest.fixture(scope="session")
def base_models_file(workdir: Path) -> Path:
    f = workdir / "base-models.json"
    f.write_text(
        json.dumps(
            {
                "models": [
                    {"id": "test/tiny-qwen3", "backend": "hf", "path": "tiny-qwen3"},
                    {"id": "test/missing-dir", "backend": "hf", "path": "no-such-model"},
                    {"id": "tuneboard/tiny-random", "backend": "builtin"},
                ]
            }
        )
    )
    return f


@pytest.fixture(scope="session")
def server(workdir: Path, base_models_file: Path):
    external = os.environ.get("TUNEBOARD_TEST_SERVER_URL")
    if external:
        yield external.rstrip("/")
        return
    port = int(os.environ.get("TUNEBOARD_TEST_PORT") or _free_port())
    prod = (REPO / ".next" / "BUILD_ID").exists()
    next_bin = REPO / "node_modules" / ".bin" / "next"
    cmd = [str(next_bin), "start" if prod else "dev", "-p", str(port)]
    env = {
        **os.environ,
        "PORT": str(port),
        "NEXT_TELEMETRY_DISABLED": "1",
        "TUNEBOARD_DATA_DIR": str(workdir / "pglite"),
        "TUNEBOARD_ARTIFACT_DIR": str(workdir / "artifacts"),
        "TUNEBOARD_BASE_MODELS_FILE": str(base_models_file),
        # Where the file's relative paths resolve on the server too (models_dir's folder), so that its built-in
        # engine serves the tiny models to /v1/chat/completions and Tinker's asample.
        "TUNEBOARD_BASE_MODELS_DIR": str(workdir / "models"),
        "TUNEBOARD_WORKER_TOKEN": WORKER_TOKEN,
        "TUNEBOARD_RUNNER_CONCURRENCY": "0",
        "TUNEBOARD_JOB_LEASE_SECONDS": str(LEASE_SECONDS),
    }
    env.pop("DATABASE_URL", None)
    log = open(workdir / "server.log", "wb")
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 240
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the Tuneboard server exited: {(workdir / 'server.log').read_text()[-3000:]}")
        try:
            if httpx.get(f"{url}/v1/health", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    else:
        os.killpg(proc.pid, signal.SIGTERM)
        raise RuntimeError("the Tuneboard server did not start within 240 s")
    yield url
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)


class Api:
    """A signed-up user's API key and the calls the tests make."""

    def __init__(self, url: str):
        self.url = url
        handle = "py" + uuid.uuid4().hex[:10]
        email, password = f"{handle}@example.test", "correct horse battery"
        r = httpx.post(f"{url}/v1/auth/sign-up", json={"email": email, "password": password, "username": handle}, timeout=60)
        assert r.status_code == 201, r.text
        r = httpx.post(f"{url}/v1/auth/token", json={"email": email, "password": password, "key_name": "pytest"}, timeout=60)
        assert r.status_code == 201, r.text
        self.http = httpx.Client(base_url=url, headers={"authorization": f"Bearer {r.json()['key']}"}, timeout=120)

    def ok(self, r: httpx.Response) -> dict:
        assert r.status_code < 300, f"{r.request.method} {r.request.url} → {r.status_code}: {r.text}"
        return r.json()

    def create_model(self, base_model: str = "test/tiny-qwen3") -> dict:
        return self.ok(self.http.post("/v1/preview/models", json={"project": "py", "name": "m" + uuid.uuid4().hex[:8], "base_model": base_model}))

    def upload_dataset(self, lines: list[dict]) -> str:
        body = "".join(json.dumps(line) + "\n" for line in lines)
        r = self.http.post(
            "/v1/preview/datasets",
            params={"project": "py", "name": "d" + uuid.uuid4().hex[:8]},
            content=body,
            headers={"content-type": "application/jsonl"},
        )
        return self.ok(r)["training_data_url"]

    def sft(self, model_id: str, url: str, config: dict) -> str:
        return self.ok(self.http.post("/v1/preview/sft-training-jobs", json={"model_id": model_id, "training_data_url": url, "config": config}))["id"]

    def rl(self, model_id: str, groups: list, experimental_config: dict | None = None) -> str:
        body = {"model_id": model_id, "trajectory_groups": groups, "experimental_config": experimental_config}
        return self.ok(self.http.post("/v1/preview/training-jobs", json=body))["id"]

    def job(self, job_id: str) -> dict:
        return self.ok(self.http.get(f"/v1/preview/training-jobs/{job_id}"))

    def events(self, job_id: str) -> list[dict]:
        return self.ok(self.http.get(f"/v1/preview/training-jobs/{job_id}/events", params={"limit": 100}))["data"]

    def checkpoints(self, model_id: str) -> list[dict]:
        return self.ok(self.http.get(f"/v1/preview/models/{model_id}/checkpoints"))["data"]

    def wait(self, job_id: str, until=lambda j: j["status"] in ("COMPLETED", "FAILED"), timeout: float = 300) -> dict:
        deadline = time.time() + timeout
        while time.time() < deadline:
            j = self.job(job_id)
            if until(j):
                return j
            time.sleep(0.3)
        raise AssertionError(f"job {job_id} did not reach the state in {timeout} s: {self.job(job_id)}")


@pytest.fixture
def api(server) -> Api:
    return Api(server)


def start_worker(server: str, models_dir: Path, *extra: str, worker_id: str | None = None, log: Path | None = None) -> subprocess.Popen:
    """The worker as users run it (python -m tuneboard_worker), one CPU thread, pinned to given args."""
    env = {**os.environ, "TUNEBOARD_WORKER_TOKEN": WORKER_TOKEN, "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}
    # The worker of this checkout, not a copy installed in the virtualenv (pip install without -e) that may be older.
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(WORKER_DIR), os.environ.get("PYTHONPATH")) if p)
    cmd = [
        sys.executable, "-m", "tuneboard_worker",
        "--server-url", server,
        "--models-dir", str(models_dir),
        "--device", "cpu",
        "--threads", "1",
        "--worker-id", worker_id or f"pytest:{uuid.uuid4().hex[:8]}",
        "--poll-max-seconds", "0.5",
        *extra,
    ]  # fmt: skip
    out = open(log, "wb") if log else subprocess.DEVNULL
    return subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT)


# resolveRlConfig's defaults (lib/schemas/training-jobs.ts) with a learning rate that moves a tiny model in a few
# steps: the RL config the worker's tests start from.
RL_CONFIG_DEFAULTS = {
    "loss": "ppo",
    "epsilon": 0.2,
    "epsilon_high": 0.2,
    "advantage_balance": 0,
    "tau": None,
    "learning_rate": 1e-2,
    "mask_prob_ratio": False,
    "max_negative_advantage_importance_sampling_weight": None,
    "precalculate_logprobs": False,
    "scale_rewards": True,
    "importance_sampling_level": "token",
    "allow_training_without_logprobs": False,
}
