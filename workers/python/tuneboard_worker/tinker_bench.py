"""The Python side of `npm run bench:tinker` (bench/tinker.ts): Tinker training-client operations through the API
against the same operations in one process.

    python -m tuneboard_worker.tinker_bench reference
        The in-process reference: JSON lines on stdin, one answer line each on stdout. It runs the worker's own
        training-client code (tinker/clients.py's ClientPool, tinker/ops.py's forward and optim_step) on the payloads
        the server hands a worker, with the worker's defaults (device, dtype, micro-batch budget, torch's threads).
        Commands: {"cmd": "load", "base_model", "path", "lora", "micro_batch_tokens"}, {"cmd": "payloads",
        "forward_backward", "optim_step"} (what each round runs, as the worker receives it), {"cmd": "round"} (one
        forward_backward then one optim_step, each timed), {"cmd": "free"}, {"cmd": "compress", "data": base64}
        (zstd, as the SDK compresses its bodies; {"error"} without the zstandard module).

    python -m tuneboard_worker.tinker_bench worker --timings FILE -- <tuneboard-worker arguments>
        The worker as users run it (`python -m tuneboard_worker ...`), with timestamps taken around its own steps,
        one JSON line per request to FILE: when its poll was sent and answered (the request in hand), when the
        answer's JSON was parsed, when decoding the wire tensors started and ended, when the operation ran, and when
        its result was posted and acknowledged. Nothing the worker does changes: the wrappers only read the clock.
        Times are the Unix epoch in seconds (time.time()), the clock bench/tinker.ts reads too.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import threading
import time
from typing import Any


def _reference() -> None:
    # Protocol lines only on the real stdout: anything a library prints goes to stderr.
    out = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1)
    sys.stdout = sys.stderr
    import torch

    from .model import pick_dtype
    from .tinker import ops
    from .tinker.clients import ClientPool

    device = torch.device("cpu")
    state: dict[str, Any] = {}

    def answer(obj: dict[str, Any]) -> None:
        out.write(json.dumps(obj) + "\n")

    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        cmd = msg.get("cmd")
        try:
            if cmd == "load":
                from pathlib import Path

                t = time.perf_counter()
                pool = ClientPool(device, pick_dtype(device, "auto"), Path(msg["path"]).parent, None, gradient_checkpointing=False)
                client = pool.create("reference", {"base_model": msg["base_model"], "base_model_path": msg["path"], "lora": msg["lora"]})
                state.update(pool=pool, client=client, micro=int(msg.get("micro_batch_tokens", 4096)))
                answer({"ok": True, "seconds": time.perf_counter() - t, "threads": torch.get_num_threads(), "trainable_parameters": client.trainable_parameters})
            elif cmd == "payloads":
                state["fb"], state["optim"] = msg["forward_backward"], msg["optim_step"]
                answer({"ok": True})
            elif cmd == "round":
                pool, client = state["pool"], state["client"]
                t0 = time.perf_counter()
                fb = ops.forward(pool, client, state["fb"], backward=True, micro_batch_tokens=state["micro"])
                t1 = time.perf_counter()
                opt = ops.optim_step(client, state["optim"])
                t2 = time.perf_counter()
                answer({"forward_backward_ms": (t1 - t0) * 1000, "optim_step_ms": (t2 - t1) * 1000, "loss": fb["metrics"]["loss:sum"], "grad_norm": opt["metrics"]["optim/grad_norm"]})
            elif cmd == "free":
                pool = state.pop("pool", None)
                if pool is not None:
                    for model_id in list(pool.clients):
                        pool.free(model_id)
                state.clear()
                import gc

                gc.collect()
                answer({"ok": True})
            elif cmd == "compress":
                try:
                    import zstandard
                except ImportError:
                    answer({"error": "the zstandard module is not installed"})
                    continue
                level = int(msg.get("level", 3))
                data = base64.b64decode(msg["data"])
                answer({"data": base64.b64encode(zstandard.ZstdCompressor(level=level).compress(data)).decode("ascii"), "level": level})
            else:
                answer({"error": f"unknown command {cmd!r}"})
        except Exception as err:  # noqa: BLE001 - reported to the benchmark, which fails the run
            import traceback

            traceback.print_exc()
            answer({"error": f"{type(err).__name__}: {err}"})


def _instrument(path: str) -> None:
    """Wraps the worker's Tinker steps with clock readings (see the module's docstring)."""
    import torch

    from .client import WorkerClient
    from .tinker import ops
    from .tinker.service import TinkerService

    sink = open(path, "a", buffering=1)
    sink.write(json.dumps({"threads": torch.get_num_threads(), "pid": os.getpid()}) + "\n")
    records: dict[str, dict[str, Any]] = {}
    current: dict[str, Any] = {}
    http_done = threading.local()

    request = WorkerClient._request

    def _request(self, method, path, **kwargs):
        res = request(self, method, path, **kwargs)
        http_done.at = time.time()  # the answer's bytes are in: .json() has not parsed them yet
        return res

    poll = WorkerClient.tinker_poll

    def tinker_poll(self, *args, **kwargs):
        sent = time.time()
        answer = poll(self, *args, **kwargs)
        parsed = time.time()
        for r in answer.get("requests") or []:
            records[r["request_id"]] = {
                "request_id": r["request_id"],
                "kind": r["kind"],
                "seq_id": r.get("seq_id"),
                "poll_sent": sent,
                "poll_answered": getattr(http_done, "at", parsed),
                "poll_parsed": parsed,
            }
        return answer

    execute = TinkerService._execute

    def _execute(self, req):
        rec = records.setdefault(req["request_id"], {"request_id": req["request_id"], "kind": req["kind"]})
        current["rec"] = rec
        rec["run_start"] = time.time()
        try:
            return execute(self, req)
        finally:
            rec["run_end"] = time.time()
            current.pop("rec", None)

    prepare = ops.prepare_data

    def prepare_data(*args, **kwargs):
        t = time.time()
        try:
            return prepare(*args, **kwargs)
        finally:
            rec = current.get("rec")
            if rec is not None:
                rec["decode_start"], rec["decode_end"] = t, time.time()

    result = WorkerClient.tinker_result

    def tinker_result(self, request_id, *args, **kwargs):
        rec = records.pop(request_id, {"request_id": request_id})
        rec["post_start"] = time.time()
        try:
            return result(self, request_id, *args, **kwargs)
        finally:
            rec["post_end"] = time.time()
            sink.write(json.dumps(rec) + "\n")

    WorkerClient._request = _request
    WorkerClient.tinker_poll = tinker_poll
    TinkerService._execute = _execute
    ops.prepare_data = prepare_data
    WorkerClient.tinker_result = tinker_result


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["reference"]:
        _reference()
    elif argv[:1] == ["worker"] and len(argv) >= 3 and argv[1] == "--timings":
        rest = argv[3:]
        if rest[:1] == ["--"]:
            rest = rest[1:]
        _instrument(argv[2])
        from .cli import main as worker_main

        worker_main(rest)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
