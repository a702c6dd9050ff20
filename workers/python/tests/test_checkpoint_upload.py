"""A checkpoint past 256 MiB uploads from the worker's own client (issue 42 item 4).

The worker always declares a Content-Length, and a declared length over TUNEBOARD_MAX_BODY_MB (256 MiB by default)
was refused with 413 although TUNEBOARD_MAX_CHECKPOINT_MB (4096) is the checkpoint limit: a LoRA adapter of rank 64
on an 8B model could never be uploaded. The session's server runs with the default limits, and is the production
build when there is one (the fast path, lib/api/fast-path.ts), else `next dev`.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from pathlib import Path

from conftest import WORKER_TOKEN, Api
from tuneboard_worker.client import LeaseLost, WorkerClient

MiB = 1024 * 1024


def test_an_adapter_past_256_mib_uploads_with_its_declared_length(api: Api, server: str, workdir: Path):
    model = api.create_model()
    url = api.upload_dataset([{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]}])
    job_id = api.sft(model["id"], url, {"batch_size": 1})
    client = WorkerClient(server, WORKER_TOKEN, f"pytest-upload:{uuid.uuid4().hex[:8]}", retries=0)
    try:
        job = client.claim(["sft"], {"backends": ["hf"]}, model_ids=[model["id"]])
        assert job is not None and job["id"] == job_id
        # 257 MiB, past the 256 MiB body limit; a pattern, so that a truncated or shifted store is caught.
        data = (bytes(range(256)) * (257 * MiB // 256))[: 257 * MiB]
        key = client.upload(job_id, "adapter_model.safetensors", data)
        assert key.endswith("/adapter_model.safetensors")
        if not os.environ.get("TUNEBOARD_TEST_SERVER_URL"):  # the session's own server, whose artifacts are here
            stored = workdir / "artifacts" / key
            assert stored.stat().st_size == len(data)
            with stored.open("rb") as f:
                digest = hashlib.file_digest(f, "sha256").hexdigest()
            assert digest == hashlib.sha256(data).hexdigest()
    finally:
        # Clean-up only. This client sends no heartbeats, so on a loaded machine (257 MiB sent, then hashed twice)
        # the suite's 20 s lease can run out first: the server then recovers the job itself, and a 409 here would
        # hide the test's own outcome.
        try:
            client.fail(job_id, "checkpoint upload test over")
        except LeaseLost:
            pass
        client.close()
