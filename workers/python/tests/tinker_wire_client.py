"""A small client of the Tinker SDK's HTTP wire (docs/tinker.md §2), written for the wire tests from the contract and
our own lib/tinker/tinker_public.proto, independent of the `tinker` SDK (which is not installable here).

It speaks what the SDK sends: `X-API-Key: tml-<key>`, JSON bodies as the 0.24 SDK dumps its pydantic models,
forward_backward as a protobuf `ForwardBackwardRequest` (0.25), optionally zstd-compressed, results read as JSON or
as protobuf (`Accept: application/x-protobuf`), and retrieve_future polled through `try_again`. The protobuf module
is compiled from our .proto with grpc_tools.protoc at first use.
"""

from __future__ import annotations

import importlib.util
import io
import json
import shutil
import tarfile
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import numpy as np

try:  # the test extras (pip install ./workers/python[test])
    import grpc_tools  # noqa: F401
    import zstandard  # noqa: F401
    from google import protobuf  # noqa: F401
except ImportError as err:  # pragma: no cover
    raise ImportError(f"the Tinker wire tests need protobuf, grpcio-tools and zstandard: pip install './workers/python[test]' ({err})") from err

REPO = Path(__file__).resolve().parents[3]
PROTO = REPO / "lib" / "tinker" / "tinker_public.proto"

_pb = None
_pb_lock = threading.Lock()


def proto_module():
    """tinker_public_pb2, compiled from lib/tinker/tinker_public.proto into a temporary directory (once a process)."""
    global _pb
    with _pb_lock:
        if _pb is None:
            from grpc_tools import protoc

            tmp = tempfile.mkdtemp(prefix="tinker-pb-")
            try:
                if protoc.main(["protoc", f"-I{PROTO.parent}", f"--python_out={tmp}", str(PROTO)]) != 0:
                    raise RuntimeError(f"protoc could not compile {PROTO}")
                spec = importlib.util.spec_from_file_location("tinker_public_pb2", f"{tmp}/tinker_public_pb2.py")
                assert spec and spec.loader
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
            _pb = module
    return _pb


# ---- data ------------------------------------------------------------------------------------------------------

INPUT_DTYPES = {
    "target_tokens": np.int64,
    "weights": np.float32,
    "logprobs": np.float32,
    "advantages": np.float32,
    "clip_low_threshold": np.float32,
    "clip_high_threshold": np.float32,
}


@dataclass
class Datum:
    """A datum: input token ids (N,) and loss_fn_inputs whose first dimension is N. `sparse` names the 2-D inputs
    to send as CSR, as the SDK sends 2-D torch tensors."""

    tokens: np.ndarray
    inputs: dict[str, np.ndarray]
    sparse: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        self.tokens = np.asarray(self.tokens, dtype=np.int64)
        self.inputs = {k: np.asarray(v, dtype=INPUT_DTYPES.get(k, np.float32)) for k, v in self.inputs.items()}


def _csr(a: np.ndarray) -> tuple[np.ndarray, list[int], list[int]]:
    values, crow, col = [], [0], []
    for row in a:
        nz = np.nonzero(row)[0]
        values.extend(row[nz].tolist())
        col.extend(int(c) for c in nz)
        crow.append(len(col))
    return np.asarray(values, dtype=a.dtype), crow, col


def tensor_json(a: np.ndarray, sparse: bool) -> dict[str, Any]:
    dtype = "int64" if a.dtype == np.int64 else "float32"
    if sparse:
        values, crow, col = _csr(a)
        return {"data": values.tolist(), "dtype": dtype, "shape": list(a.shape), "sparse_crow_indices": crow, "sparse_col_indices": col}
    # TensorData.from_numpy / from_torch give every tensor its shape (the server also reads a 1-D one without).
    return {"data": a.reshape(-1).tolist(), "dtype": dtype, "shape": list(a.shape)}


def datum_json(d: Datum) -> dict[str, Any]:
    return {
        "loss_fn_inputs": {k: tensor_json(v, k in d.sparse) for k, v in d.inputs.items()},
        "model_input": {"chunks": [{"tokens": d.tokens.tolist(), "type": "encoded_text"}]},
    }


def forward_input_json(data: list[Datum], loss_fn: str, loss_fn_config: dict[str, float] | None) -> dict[str, Any]:
    return {"data": [datum_json(d) for d in data], "loss_fn": loss_fn, "loss_fn_config": loss_fn_config}


def forward_backward_proto(
    model_id: str, seq_id: int | None, data: list[Datum], loss_fn: str, loss_fn_config: dict[str, float] | None, forward_only: bool = False
) -> bytes:
    """A ForwardBackwardRequest as the 0.25 SDK writes it (proto/request_conv.py's layout, from our .proto)."""
    pb = proto_module()
    msg = pb.ForwardBackwardRequest()
    msg.model_id = model_id
    msg.seq_id = seq_id or 0
    msg.loss_fn = loss_fn
    for k, v in (loss_fn_config or {}).items():
        msg.loss_fn_config[k] = float(v)
    msg.forward_only = forward_only
    for d in data:
        dm = msg.data.add()
        dm.model_input.add().encoded_text.tokens = d.tokens.astype("<i4").tobytes()
        for name, a in d.inputs.items():
            t = dm.loss_fn_inputs[name]
            float_ = a.dtype == np.float32
            t.dtype = pb.DTYPE_FLOAT32 if float_ else pb.DTYPE_INT64
            t.shape.extend(a.shape)
            np_dtype = "<f4" if float_ else "<i8"
            if name in d.sparse:
                values, crow, col = _csr(a)
                t.sparse_csr.values = values.astype(np_dtype).tobytes()
                t.sparse_csr.crow_indices = np.asarray(crow, "<i8").tobytes()
                t.sparse_csr.col_indices = np.asarray(col, "<i8").tobytes()
            else:
                t.dense = a.astype(np_dtype).tobytes()
    return msg.SerializeToString()


def zstd(body: bytes) -> bytes:
    return zstandard.ZstdCompressor().compress(body)


# ---- results -----------------------------------------------------------------------------------------------------


@dataclass
class ForwardOutput:
    """A ForwardBackwardOutput, whichever encoding it came in: per datum its logprobs, and the metrics."""

    logprobs: list[np.ndarray]
    metrics: dict[str, float]
    loss_fn_output_type: str
    encoding: str

    @property
    def loss(self) -> float:
        return self.metrics["loss:sum"]


_NP = {"float32": np.float32, "int64": np.int64}


def forward_output_from_json(body: dict[str, Any]) -> ForwardOutput:
    lps = []
    for out in body["loss_fn_outputs"]:
        t = out["logprobs"]
        a = np.asarray(t["data"], dtype=_NP[t["dtype"]])
        lps.append(a.reshape(t["shape"]) if t.get("shape") is not None else a)
    return ForwardOutput(lps, dict(body["metrics"]), body["loss_fn_output_type"], "json")


def forward_output_from_proto(data: bytes) -> ForwardOutput:
    pb = proto_module()
    msg = pb.ForwardBackwardOutput()
    msg.ParseFromString(data)
    dtypes = {pb.DTYPE_FLOAT32: "<f4", pb.DTYPE_INT64: "<i8", pb.DTYPE_INT32: "<i4"}
    lps: list[np.ndarray] = []
    for record in msg.loss_fn_outputs:
        bt = record.fields["logprobs"]
        offsets = np.frombuffer(bt.offsets, "<i8")
        assert len(offsets) == record.num_datums + 1, (len(offsets), record.num_datums)
        trailing = list(bt.trailing_shape)
        for i in range(record.num_datums):
            a = np.frombuffer(bt.data[offsets[i] : offsets[i + 1]], dtypes[bt.dtype]).astype(np.float32)
            lps.append(a.reshape([-1, *trailing]))
    return ForwardOutput(lps, dict(msg.metrics), msg.loss_fn_output_type, "proto")


@dataclass
class Sample:
    tokens: list[int]
    logprobs: np.ndarray
    stop_reason: str


def samples_from_json(body: dict[str, Any]) -> list[Sample]:
    return [Sample(list(s["tokens"]), np.asarray(s["logprobs"], np.float32), s["stop_reason"]) for s in body["sequences"]]


def samples_from_proto(data: bytes) -> list[Sample]:
    pb = proto_module()
    msg = pb.SampleResponse()
    msg.ParseFromString(data)
    reasons = {pb.STOP_REASON_STOP: "stop", pb.STOP_REASON_LENGTH: "length"}
    return [
        Sample(np.frombuffer(s.tokens, "<i4").tolist(), np.frombuffer(s.logprobs, "<f4").copy(), reasons[s.stop_reason])
        for s in msg.sequences
    ]


class RequestFailed(Exception):
    """A future that failed: 200 {"error", "category"} from retrieve_future."""

    def __init__(self, error: str, category: str):
        super().__init__(f"[{category}] {error}")
        self.error = error
        self.category = category


class HttpError(AssertionError):
    def __init__(self, response: httpx.Response):
        super().__init__(f"{response.request.method} {response.request.url.path} → {response.status_code}: {response.text[:2000]}")
        self.response = response
        self.status = response.status_code


# ---- the client ------------------------------------------------------------------------------------------------


class TinkerWire:
    """One API key's connection to the Tinker routes of a Tuneboard server."""

    def __init__(self, base_url: str, api_key: str, timeout: float = 60):
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.http = httpx.Client(base_url=self.base_url, headers={"X-API-Key": f"tml-{api_key}"}, timeout=timeout)
        self._model_seq = 0
        self._sampling_seq = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()

    def close(self) -> None:
        self._stop.set()
        self.http.close()

    def _heartbeat(self, session_id: str) -> None:
        """Every 10 s, as the SDK's session does: a session the suite holds across slow tests (a loaded CI machine took
        over 3 minutes between a module's first and last) must not end for silence, which only the SDK's own
        heart-beating prevents."""
        with httpx.Client(base_url=self.base_url, headers=dict(self.http.headers), timeout=30) as http:
            while not self._stop.wait(10):
                try:
                    http.post("/api/v1/session_heartbeat", json={"session_id": session_id, "type": "session_heartbeat"})
                except httpx.HTTPError:
                    pass  # the next beat tries again, as the SDK's does

    # --- raw calls --------------------------------------------------------------------------------------------

    def post(self, path: str, body: Any = None, *, content: bytes | None = None, headers: dict[str, str] | None = None, timeout: float | None = None) -> httpx.Response:
        kwargs: dict[str, Any] = {"headers": headers or {}}
        if timeout is not None:
            kwargs["timeout"] = timeout
        if content is not None:
            return self.http.post(f"/api/v1/{path}", content=content, **kwargs)
        return self.http.post(f"/api/v1/{path}", json=body, **kwargs)

    def ok(self, r: httpx.Response) -> dict[str, Any]:
        if r.status_code >= 300:
            raise HttpError(r)
        return r.json()

    def submit(self, path: str, body: Any = None, **kw: Any) -> str:
        """A training call or asample: its request_id (the future)."""
        answer = self.ok(self.post(path, body, **kw))
        assert isinstance(answer.get("request_id"), str), answer
        return answer["request_id"]

    def retrieve_raw(self, request_id: str, *, proto: bool = False, timeout: float = 120.0) -> httpx.Response:
        """retrieve_future until it is no longer `try_again`: the final response (a result, or a failure)."""
        deadline = time.monotonic() + timeout
        headers = {"Accept": "application/x-protobuf"} if proto else {}
        while True:
            r = self.post("retrieve_future", {"request_id": request_id, "allow_metadata_only": False}, headers=headers)
            if r.status_code >= 300:
                raise HttpError(r)
            if "application/x-protobuf" in r.headers.get("content-type", ""):
                return r
            body = json.loads(r.text)
            if body.get("type") == "try_again":
                if time.monotonic() > deadline:
                    raise TimeoutError(f"request {request_id} still pending after {timeout} s: {body}")
                continue
            return r

    def retrieve(self, request_id: str, *, proto: bool = False, timeout: float = 120.0) -> Any:
        """The result: a dict for JSON results, raw bytes for protobuf ones. A failed future raises RequestFailed."""
        r = self.retrieve_raw(request_id, proto=proto, timeout=timeout)
        if "application/x-protobuf" in r.headers.get("content-type", ""):
            return r.content
        body = json.loads(r.text)  # Python's json, as the SDK: reads NaN / -Infinity literals
        if "error" in body and "category" in body:
            raise RequestFailed(body["error"], body["category"])
        return body

    def forward_result(self, request_id: str, *, proto: bool = False) -> ForwardOutput:
        got = self.retrieve(request_id, proto=proto)
        if proto:
            assert isinstance(got, bytes), f"asked for protobuf, got {got!r:.300}"
            return forward_output_from_proto(got)
        return forward_output_from_json(got)

    def sample_result(self, request_id: str, *, proto: bool = False) -> list[Sample]:
        got = self.retrieve(request_id, proto=proto)
        return samples_from_proto(got) if proto else samples_from_json(got)

    # --- sessions and models ----------------------------------------------------------------------------------

    def create_session(self, project: str | None = None) -> str:
        body = {"tags": ["wire-test"], "user_metadata": None, "sdk_version": "0.24.1", "type": "create_session"}
        if project:
            body["project_id"] = project
        session_id = self.ok(self.post("create_session", body))["session_id"]
        threading.Thread(target=self._heartbeat, args=(session_id,), daemon=True, name=f"heartbeat-{session_id}").start()
        return session_id

    def create_model(self, session_id: str, base_model: str, *, rank: int = 4, seed: int | None = 0, **flags: bool) -> "TrainingClient":
        with self._lock:
            self._model_seq += 1
            model_seq = self._model_seq
        lora = {"rank": rank, "seed": seed, "train_attn": True, "train_mlp": True, "train_unembed": True, **flags}
        body = {"session_id": session_id, "model_seq_id": model_seq, "base_model": base_model, "lora_config": lora, "type": "create_model"}
        future = self.ok(self.post("create_model", body))
        result = self.retrieve(future["request_id"], timeout=300)
        assert result["model_id"] == future["model_id"], (result, future)
        return TrainingClient(self, session_id, result["model_id"])

    def next_sampling_seq(self) -> int:
        with self._lock:
            self._sampling_seq += 1
            return self._sampling_seq

    def create_sampling_session(self, session_id: str, model_path: str) -> "SamplingClient":
        body = {"session_id": session_id, "sampling_session_seq_id": self.next_sampling_seq(), "model_path": model_path, "type": "create_sampling_session"}
        return SamplingClient(self, self.ok(self.post("create_sampling_session", body))["sampling_session_id"])

    def download_weights(self, tinker_path: str, dest: Path) -> Path:
        """The archive of saved weights (GET …/archive → 302 → a tar that needs no key), extracted into dest."""
        model_id, kind, name = tinker_path.removeprefix("tinker://").split("/")
        r = self.http.get(f"/api/v1/training_runs/{model_id}/checkpoints/{kind}/{name}/archive", follow_redirects=False)
        assert r.status_code == 302, f"{r.status_code}: {r.text[:500]}"
        tar = httpx.get(r.headers["location"], timeout=60)  # no API key: the link is the credential
        assert tar.status_code == 200, f"{tar.status_code}: {tar.text[:500]}"
        dest.mkdir(parents=True, exist_ok=True)
        with tarfile.open(fileobj=io.BytesIO(tar.content)) as t:
            for member in t.getmembers():
                assert member.isfile() and "/" not in member.name, member.name  # the files at the top level
                (dest / member.name).write_bytes(t.extractfile(member).read())  # type: ignore[union-attr]
        return dest


@dataclass
class TrainingClient:
    wire: TinkerWire
    session_id: str
    model_id: str
    _seq: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def next_seq(self) -> int:
        """The next seq_id of this training client (1, 2, 3, …: docs/tinker.md §2.3)."""
        with self._lock:
            self._seq += 1
            return self._seq

    # --- bodies -----------------------------------------------------------------------------------------------

    def fb_request(
        self, data: list[Datum], loss_fn: str = "cross_entropy", loss_fn_config: dict[str, float] | None = None, *,
        encoding: str = "json", seq_id: int | None = None, forward_only: bool = False,
    ) -> tuple[str, bytes, dict[str, str]]:  # fmt: skip
        """(route, body, headers) of a forward / forward_backward request in one of the SDK's encodings: `json`
        (0.24: /forward for forward_only, /forward_backward otherwise), `proto` or `zstd` (0.25)."""
        if encoding == "json":
            key = "forward_input" if forward_only else "forward_backward_input"
            body = {key: forward_input_json(data, loss_fn, loss_fn_config), "model_id": self.model_id, "seq_id": seq_id, "type": "forward" if forward_only else "forward_backward"}
            return ("forward" if forward_only else "forward_backward", json.dumps(body).encode(), {"Content-Type": "application/json"})
        raw = forward_backward_proto(self.model_id, seq_id, data, loss_fn, loss_fn_config, forward_only)
        headers = {"Content-Type": "application/x-protobuf"}
        if encoding == "zstd":
            raw = zstd(raw)
            headers["Content-Encoding"] = "zstd"
        else:
            assert encoding == "proto", encoding
        return "forward_backward", raw, headers

    def send(self, route: str, body: bytes, headers: dict[str, str], idempotency_key: str | None = None) -> httpx.Response:
        h = dict(headers)
        if idempotency_key:
            h["X-Idempotency-Key"] = idempotency_key
        return self.wire.post(route, content=body, headers=h)

    # --- calls --------------------------------------------------------------------------------------------------

    def forward_backward(
        self, data: list[Datum], loss_fn: str = "cross_entropy", loss_fn_config: dict[str, float] | None = None, *,
        encoding: str = "json", forward_only: bool = False, seq_id: int | None = None, idempotency_key: str | None = None,
    ) -> str:  # fmt: skip
        seq = seq_id if seq_id is not None else self.next_seq()
        route, body, headers = self.fb_request(data, loss_fn, loss_fn_config, encoding=encoding, seq_id=seq, forward_only=forward_only)
        r = self.send(route, body, headers, idempotency_key or uuid.uuid4().hex)
        return self.wire.ok(r)["request_id"]

    def forward(self, data: list[Datum], loss_fn: str = "cross_entropy", loss_fn_config: dict[str, float] | None = None, **kw: Any) -> str:
        return self.forward_backward(data, loss_fn, loss_fn_config, forward_only=True, **kw)

    def optim_step(self, *, seq_id: int | None = None, idempotency_key: str | None = None, **adam: float) -> str:
        params = {"learning_rate": 1e-4, "beta1": 0.9, "beta2": 0.95, "eps": 1e-12, "weight_decay": 0.0, "grad_clip_norm": 0.0, **adam}
        body = {"adam_params": params, "model_id": self.model_id, "seq_id": seq_id if seq_id is not None else self.next_seq(), "type": "optim_step"}
        return self.wire.submit("optim_step", body, headers={"X-Idempotency-Key": idempotency_key or uuid.uuid4().hex})

    def step(self, **adam: float) -> dict[str, float]:
        """optim_step, waited for: its metrics."""
        return self.wire.retrieve(self.optim_step(**adam))["metrics"]

    def run_forward(self, data: list[Datum], loss_fn: str = "cross_entropy", loss_fn_config: dict[str, float] | None = None, *, backward: bool = True, proto: bool = False, **kw: Any) -> ForwardOutput:
        rid = self.forward_backward(data, loss_fn, loss_fn_config, forward_only=not backward, **kw)
        return self.wire.forward_result(rid, proto=proto)

    def save_state(self, name: str) -> str:
        body = {"model_id": self.model_id, "path": name, "seq_id": self.next_seq(), "type": "save_weights"}
        return self.wire.retrieve(self.wire.submit("save_weights", body))["path"]

    def load_state(self, path: str, *, optimizer: bool = False) -> None:
        body = {"model_id": self.model_id, "path": path, "seq_id": self.next_seq(), "optimizer": optimizer, "type": "load_weights"}
        self.wire.retrieve(self.wire.submit("load_weights", body))

    def save_for_sampler(self, name: str | None = None) -> dict[str, Any]:
        """save_weights_for_sampler: named, its path; unnamed (save_weights_and_get_sampling_client), also a
        sampling_session_id."""
        body: dict[str, Any] = {"model_id": self.model_id, "path": name, "seq_id": self.next_seq(), "type": "save_weights_for_sampler"}
        if name is None:
            body["sampling_session_seq_id"] = self.wire.next_sampling_seq()
        return self.wire.retrieve(self.wire.submit("save_weights_for_sampler", body))

    def sampling_client(self) -> "SamplingClient":
        saved = self.save_for_sampler(None)
        assert saved.get("sampling_session_id"), saved
        return SamplingClient(self.wire, saved["sampling_session_id"], saved.get("path"))


@dataclass
class SamplingClient:
    wire: TinkerWire
    sampling_session_id: str
    model_path: str | None = None
    _seq: int = 0

    def asample(self, prompt: list[int], num_samples: int, *, proto: bool = False, **params: Any) -> list[Sample]:
        return self.wire.sample_result(self.asample_future(prompt, num_samples, **params), proto=proto)

    def asample_future(self, prompt: list[int], num_samples: int, **params: Any) -> str:
        """asample: its request_id."""
        self._seq += 1
        sampling = {"max_tokens": None, "seed": None, "stop": None, "temperature": 1.0, "top_k": -1, "top_p": 1.0, **params}
        body = {
            "num_samples": num_samples,
            "prompt": {"chunks": [{"tokens": list(prompt), "type": "encoded_text"}]},
            "sampling_params": sampling,
            "sampling_session_id": self.sampling_session_id,
            "seq_id": self._seq,
            "prompt_logprobs": False,
            "topk_prompt_logprobs": 0,
            "type": "sample",
        }
        return self.wire.submit("asample", body, headers={"X-Idempotency-Key": uuid.uuid4().hex})


def sdk_key(api_http: httpx.Client) -> str:
    """The Tuneboard API key behind conftest's Api (its Authorization header)."""
    return api_http.headers["authorization"].split(" ", 1)[1]


__all__ = [
    "Datum",
    "ForwardOutput",
    "HttpError",
    "RequestFailed",
    "Sample",
    "SamplingClient",
    "TinkerWire",
    "TrainingClient",
    "forward_backward_proto",
    "proto_module",
    "sdk_key",
    "zstd",
]
