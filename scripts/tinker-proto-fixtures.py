#!/usr/bin/env python3
"""Fixtures for lib/tinker's protobuf codec, made and checked with the real protobuf runtime.

Our lib/tinker/tinker_public.proto is compiled with grpc_tools.protoc into a temporary directory; the generated module
then writes and reads messages exactly as the Tinker SDK's own runtime does. Nothing from the SDK is used or copied.

  tests/fixtures/tinker/requests/*.pb[.zst]  ForwardBackwardRequest bodies (dense and sparse tensors, 1-D and (N, K)
                                             targets, every loss, loss_fn_config, forward_only, several chunks,
                                             unknown fields of every wire type), zstd-compressed copies, and bodies
                                             the decoder must refuse
  tests/fixtures/tinker/requests.json        per body: its file, Content-Encoding, and the decoded request
                                             (lib/tinker/forward-request.ts's ForwardRequest) or the refusal
  tests/fixtures/tinker/results.json         internal ForwardResult / SampleResult cases and the runtime's own
                                             (deterministic) encoding of ForwardBackwardOutput / SampleResponse
                                             for each, which lib/tinker/results.ts must write byte for byte

After writing them the script runs lib/tinker/results.ts itself (npx tsx, so node_modules must be installed) on
every result case and on a sweep of float32 values, and reads what it wrote back with the runtime and with Python's json module the way the SDK does
(proto/response_conv.py, the pydantic models of 0.24): every value must come back the same.

    python3 -m venv /tmp/pb && /tmp/pb/bin/pip install protobuf grpcio-tools numpy zstandard
    /tmp/pb/bin/python scripts/tinker-proto-fixtures.py
    /tmp/pb/bin/python scripts/tinker-proto-fixtures.py --sdk-pb2 <tinker>/proto/tinker_public_pb2.py

--sdk-pb2 also compares our .proto's descriptor, field by field, with the one a `tinker` SDK embeds.
"""

from __future__ import annotations

import argparse
import ast
import base64
import importlib.util
import json
import math
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import zstandard
from google.protobuf import descriptor_pb2
from grpc_tools import protoc

ROOT = Path(__file__).resolve().parent.parent
PROTO = ROOT / "lib/tinker/tinker_public.proto"
OUT = ROOT / "tests/fixtures/tinker"
MODEL_ID = "0b9c6f0e-3f4a-4c57-9d0e-1f2a3b4c5d6e"
MASK_LOGPROB = -99999.0


def compile_proto():
    tmp = tempfile.mkdtemp()
    try:
        if protoc.main(["protoc", f"-I{PROTO.parent}", f"--python_out={tmp}", str(PROTO)]) != 0:
            sys.exit("protoc failed")
        spec = importlib.util.spec_from_file_location("tinker_public_pb2", f"{tmp}/tinker_public_pb2.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        shutil.rmtree(tmp)


pb = compile_proto()


# ---- raw wire pieces (for what the runtime's API cannot write: unknown fields in map entries, unpacked shapes) ----


def varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        if n < 0x80:
            out.append(n)
            return bytes(out)
        out.append((n & 0x7F) | 0x80)
        n >>= 7


def tag(field: int, wire: int) -> bytes:
    return varint(field << 3 | wire)


def ld(field: int, payload: bytes) -> bytes:
    return tag(field, 2) + varint(len(payload)) + payload


# Unknown fields of every wire type, a group holding a nested group among them.
UNKNOWN = (
    tag(900, 0) + varint(12345)
    + tag(901, 1) + struct.pack("<d", 1.5)
    + ld(902, b"\x08\x01unknown bytes")
    + tag(903, 3) + tag(904, 0) + varint(7) + tag(905, 3) + tag(906, 5) + b"\0\0\0\0" + tag(905, 4) + tag(903, 4)
    + tag(907, 5) + struct.pack("<f", 2.5)
)


# ---- requests ------------------------------------------------------------------------------------------------------

INPUT_DTYPES = {
    "target_tokens": "<i8",
    "weights": "<f4",
    "logprobs": "<f4",
    "advantages": "<f4",
    "clip_low_threshold": "<f4",
    "clip_high_threshold": "<f4",
}

rng = np.random.default_rng(40)


def b64(array: np.ndarray) -> str:
    return base64.b64encode(array.tobytes()).decode()


def wire_tensor(array: np.ndarray, dtype: str) -> dict:
    """The internal WireTensor (docs/tinker.md §3.1) of `array`."""
    return {"dtype": dtype, "shape": list(array.shape), "data": b64(array)}


def csr(array: np.ndarray):
    """CSR of a 2-D array as torch's to_sparse_csr writes it: row pointers, sorted column indices, values."""
    crow, col, values = [0], [], []
    for row in array:
        for c, v in enumerate(row):
            if v != 0:
                col.append(c)
                values.append(v)
        crow.append(len(col))
    return np.asarray(crow, "<i8"), np.asarray(col, "<i8"), np.asarray(values, array.dtype)


def proto_tensor(array: np.ndarray, encoding: str = "dense"):
    t = pb.Tensor()
    t.dtype = pb.DTYPE_FLOAT32 if array.dtype == np.dtype("<f4") else pb.DTYPE_INT64
    if encoding != "noshape":
        t.shape.extend(array.shape)
    if encoding == "sparse":
        crow, col, values = csr(array)
        t.sparse_csr.values = values.tobytes()
        t.sparse_csr.crow_indices = crow.tobytes()
        t.sparse_csr.col_indices = col.tobytes()
    else:
        t.dense = array.tobytes()
    return t


def datum(chunks, inputs: dict, encodings: dict | None = None) -> dict:
    return {"chunks": [np.asarray(c, "<i4") for c in chunks], "inputs": inputs, "encodings": encodings or {}}


def text_datum(loss: str, n: int, k: int | None = None, extra: tuple = (), encodings=None) -> dict:
    tokens = rng.integers(0, 150000, n)
    shape = (n,) if k is None else (n, k)
    inputs = {"target_tokens": rng.integers(0, 150000, shape).astype("<i8")}
    names = ("logprobs", "advantages") if loss != "cross_entropy" else ()
    for name in names + extra:
        inputs[name] = (rng.standard_normal(shape) - (2 if name == "logprobs" else 0)).astype("<f4")
    return datum([tokens], inputs, encodings)


def build_request(loss_fn: str, datums: list, seq_id=1, config=None, forward_only=False):
    msg = pb.ForwardBackwardRequest()
    msg.model_id = MODEL_ID
    msg.seq_id = seq_id
    msg.loss_fn = loss_fn
    msg.forward_only = forward_only
    for k, v in (config or {}).items():
        msg.loss_fn_config[k] = v
    for d in datums:
        dm = msg.data.add()
        for c in d["chunks"]:
            dm.model_input.add().encoded_text.tokens = c.tobytes()
        for name, array in d["inputs"].items():
            dm.loss_fn_inputs[name].CopyFrom(proto_tensor(array, d["encodings"].get(name, "dense")))
    return msg


def expected(loss_fn: str, datums: list, seq_id=1, config=None, forward_only=False) -> dict:
    data = []
    for d in datums:
        tokens = np.concatenate(d["chunks"]).astype("<i4")
        inputs = {name: wire_tensor(a.astype(INPUT_DTYPES[name]), "int64" if name == "target_tokens" else "float32")
                  for name, a in d["inputs"].items()}
        data.append({"tokens": wire_tensor(tokens, "int32"), "loss_fn_inputs": inputs})
    return {
        "model_id": MODEL_ID,
        "seq_id": seq_id or None,
        "forward_only": forward_only,
        "payload": {"loss_fn": loss_fn, "loss_fn_config": config or None, "data": data},
    }


class Fixtures:
    def __init__(self):
        self.manifest = []
        (OUT / "requests").mkdir(parents=True, exist_ok=True)

    def add(self, name: str, body: bytes, *, encoding=None, limit=None, expect=None, error=None):
        path = OUT / "requests" / (name + (".pb.zst" if encoding == "zstd" else ".pb"))
        path.write_bytes(body)
        entry = {"name": name, "file": f"requests/{path.name}"}
        if encoding:
            entry["content_encoding"] = encoding
        if limit:
            entry["limit_bytes"] = limit
        entry.update({"expected": expect} if error is None else {"error": error})
        self.manifest.append(entry)

    def ok(self, name, loss_fn, datums, **kw):
        msg = build_request(loss_fn, datums, **kw)
        body = msg.SerializeToString(deterministic=True)
        self.add(name, body, expect=expected(loss_fn, datums, **kw))
        return body, expected(loss_fn, datums, **kw)

    def refuse(self, name, body, status, contains, **kw):
        self.add(name, body, error={"status": status, "contains": contains}, **kw)


def request_fixtures():
    fx = Fixtures()
    ce_body, ce_expect = fx.ok(
        "cross_entropy", "cross_entropy",
        [text_datum("cross_entropy", 5, extra=("weights",)), text_datum("cross_entropy", 3, extra=("weights",))],
        seq_id=7,
    )
    fx.ok("cross_entropy_no_shape_forward_only", "cross_entropy",
          [text_datum("cross_entropy", 4, encodings={"target_tokens": "noshape"})], seq_id=0, forward_only=True)
    multi = text_datum("cross_entropy", 8, extra=("weights",))
    multi["chunks"] = [multi["chunks"][0][:3], multi["chunks"][0][3:4], multi["chunks"][0][4:]]
    fx.ok("cross_entropy_multichunk", "cross_entropy", [multi], seq_id=2)
    fx.ok("cross_entropy_topk_dense", "cross_entropy", [text_datum("cross_entropy", 4, k=3, extra=("weights",))])

    # (N, K) targets as the SDK sends 2-D torch tensors: sparse CSR when that is smaller; one row left empty.
    n, k = 6, 4
    weights = np.zeros((n, k), "<f4")
    weights[0, 0], weights[1, 2], weights[1, 3], weights[4, 1], weights[5, 0] = 1.0, 0.5, -0.25, 2.0, 0.75
    targets = np.where(weights != 0, rng.integers(1, 150000, (n, k)), 0).astype("<i8")
    sparse = datum([rng.integers(0, 150000, n)], {"target_tokens": targets, "weights": weights},
                   {"target_tokens": "sparse", "weights": "sparse"})
    fx.ok("cross_entropy_topk_sparse", "cross_entropy", [sparse, text_datum("cross_entropy", 2, k=4)], seq_id=3)

    fx.ok("importance_sampling", "importance_sampling",
          [text_datum("importance_sampling", 6), text_datum("importance_sampling", 1)])
    ppo_body, ppo_expect = fx.ok(
        "ppo", "ppo",
        [text_datum("ppo", 5, extra=("weights", "clip_low_threshold", "clip_high_threshold"))],
        seq_id=11, config={"clip_high_threshold": 1.3, "clip_low_threshold": 0.7},
    )
    fx.ok("cispo", "cispo", [text_datum("cispo", 7)], config={"clip_high_threshold": 4.0})
    fx.ok("dro", "dro", [text_datum("dro", 3, extra=("weights",))], seq_id=2**31 - 1, config={"beta": 0.1})

    # Every message with unknown fields, fields out of order, a map entry with its value before its key, an
    # unpacked shape, and model_id given twice (the last wins). Not inside map entries: upb (the runtime the SDK
    # uses) then keeps the whole entry as an unknown field of the message instead of a map entry.
    tokens = np.asarray([11, 12, 13], "<i4")
    target = np.asarray([12, 13, 14], "<i8")
    encoded = ld(1, tokens.tobytes()) + UNKNOWN
    chunk = UNKNOWN + ld(1, encoded)
    tensor = tag(4, 0) + varint(3) + UNKNOWN + tag(3, 0) + varint(pb.DTYPE_INT64) + ld(1, target.tobytes())
    entry = ld(2, tensor) + ld(1, b"target_tokens")
    # dro, the loss that takes `beta` (a loss_fn_config key cross_entropy would refuse), with its other inputs as
    # the runtime writes them.
    logprobs = np.asarray([-1.0, -2.0, -0.5], "<f4")
    advantages = np.asarray([0.5, 0.0, -1.0], "<f4")
    rl_entries = b"".join(
        ld(2, ld(1, name.encode()) + ld(2, proto_tensor(values).SerializeToString()))
        for name, values in (("logprobs", logprobs), ("advantages", advantages))
    )
    config_entry = tag(2, 1) + struct.pack("<d", 0.5) + ld(1, b"beta")
    datum_bytes = UNKNOWN + ld(2, entry) + rl_entries + ld(1, chunk)
    body = (
        ld(1, b"wrong-model") + UNKNOWN + ld(3, datum_bytes) + ld(4, b"dro") + ld(1, MODEL_ID.encode())
        + tag(2, 0) + varint(4) + ld(5, config_entry) + tag(6, 0) + varint(0) + UNKNOWN
    )
    parsed = pb.ForwardBackwardRequest.FromString(body)  # the runtime reads it as the request below
    assert parsed.model_id == MODEL_ID and parsed.seq_id == 4 and parsed.loss_fn_config["beta"] == 0.5
    assert list(parsed.data[0].loss_fn_inputs["target_tokens"].shape) == [3]
    unknown = datum([tokens], {"target_tokens": target, "logprobs": logprobs, "advantages": advantages})
    fx.add("unknown_fields", body, expect=expected("dro", [unknown], seq_id=4, config={"beta": 0.5}))

    # zstd: with a declared size and checksum, streamed without a size, two frames after a skippable frame.
    fx.add("cross_entropy_zstd", zstandard.ZstdCompressor(write_checksum=True).compress(ce_body), encoding="zstd",
           expect=ce_expect)
    streamed = zstandard.ZstdCompressor(write_content_size=False).compressobj()
    ppo_zst = streamed.compress(ppo_body) + streamed.flush()
    fx.add("ppo_zstd_streamed", ppo_zst, encoding="zstd", expect=ppo_expect)
    half = len(ce_body) // 2
    skippable = struct.pack("<II", 0x184D2A53, 5) + b"hello"
    frames = skippable + zstandard.compress(ce_body[:half]) + zstandard.compress(ce_body[half:])
    fx.add("cross_entropy_zstd_frames", frames, encoding="zstd", expect=ce_expect)

    refusals(fx, ce_body)
    (OUT / "requests.json").write_text(json.dumps(fx.manifest, indent=1) + "\n")
    return len(fx.manifest)


def refusals(fx: Fixtures, ce_body: bytes):
    bad = "malformed protobuf body"
    fx.refuse("truncated", ce_body[:-3], 400, bad)
    fx.refuse("length_past_end", ld(1, MODEL_ID.encode())[:-1], 400, "ForwardBackwardRequest.model_id: truncated")
    fx.refuse("model_id_as_varint", tag(1, 0) + varint(5), 400, "ForwardBackwardRequest.model_id: arrived as varint")
    fx.refuse("varint_too_long", tag(2, 0) + b"\xff" * 10 + b"\x01", 400, "longer than 10 bytes")
    fx.refuse("group_never_closed", tag(9, 3) + tag(1, 0) + varint(1), 400, "group 9 is not closed")
    fx.refuse("groups_too_deep", tag(9, 3) * 100, 400, "nested more than")
    fx.refuse("end_group_alone", tag(9, 4), 400, "never started")
    fx.refuse("wire_type_7", tag(9, 7), 400, "invalid wire type 7")
    fx.refuse("not_utf8", ld(1, b"\xff\xfe"), 400, "not UTF-8")

    def one(loss, d, **kw):
        return build_request(loss, [d], **kw).SerializeToString(deterministic=True)

    def image_chunk_request():
        msg = build_request("cross_entropy", [text_datum("cross_entropy", 3)])
        image = msg.data[0].model_input.add().image
        image.data, image.format, image.expected_tokens = b"\x89PNG", "png", 4
        return msg.SerializeToString(deterministic=True)

    def dmel_chunk_request():
        msg = build_request("cross_entropy", [text_datum("cross_entropy", 3)])
        msg.data[0].model_input.add().dmel.dmel = b"\0\1"
        return msg.SerializeToString(deterministic=True)

    fx.refuse("image_chunk", image_chunk_request(), 400, "this server trains text models: datum 0's model_input has an image chunk")
    fx.refuse("dmel_chunk", dmel_chunk_request(), 400, "datum 0's model_input has an audio chunk (dmel)")
    fx.refuse("unknown_loss", one("dpo", text_datum("cross_entropy", 3)), 400, "unknown loss_fn 'dpo'")
    fx.refuse("no_loss", one("", text_datum("cross_entropy", 3)), 400, "loss_fn is missing")
    msg = build_request("cross_entropy", [text_datum("cross_entropy", 3)])
    msg.ClearField("model_id")
    fx.refuse("no_model_id", msg.SerializeToString(deterministic=True), 400, "model_id is missing")
    fx.refuse("negative_seq_id", one("cross_entropy", text_datum("cross_entropy", 3), seq_id=-2), 400, "seq_id is -2")
    fx.refuse("no_data", build_request("cross_entropy", []).SerializeToString(deterministic=True), 400, "data is empty")
    no_adv = text_datum("ppo", 4)
    del no_adv["inputs"]["advantages"]
    fx.refuse("ppo_without_advantages", one("ppo", no_adv), 400,
              "datum 0: loss_fn_inputs.advantages is missing; ppo needs target_tokens, logprobs, advantages")
    unknown_input = text_datum("cross_entropy", 3)
    unknown_input["inputs"]["mask"] = np.ones(3, "<f4")
    fx.refuse("unknown_input", one("cross_entropy", unknown_input), 400, "datum 0: unknown loss_fn_inputs 'mask'")

    msg = build_request("cross_entropy", [text_datum("cross_entropy", 3, extra=("weights",))])
    msg.data[0].loss_fn_inputs["weights"].dtype = pb.DTYPE_BFLOAT16
    fx.refuse("bfloat16_input", msg.SerializeToString(deterministic=True), 400, "loss_fn_inputs.weights has dtype DTYPE_BFLOAT16")
    float_target = text_datum("cross_entropy", 3)
    float_target["inputs"]["target_tokens"] = float_target["inputs"]["target_tokens"].astype("<f4")
    fx.refuse("float_target", one("cross_entropy", float_target), 400,
              "datum 0: loss_fn_inputs.target_tokens has dtype float32; it must be int64")
    int_weights = text_datum("cross_entropy", 3)
    int_weights["inputs"]["weights"] = np.ones(3, "<i8")
    fx.refuse("int64_weights", one("cross_entropy", int_weights), 400,
              "datum 0: loss_fn_inputs.weights has dtype int64; it must be float32")
    short = text_datum("cross_entropy", 4, extra=("weights",))
    short["inputs"]["weights"] = short["inputs"]["weights"][:3]
    fx.refuse("weights_shape", one("cross_entropy", short), 400,
              "datum 0: loss_fn_inputs.weights has shape [3]; it must match target_tokens' shape [4]")
    long_target = text_datum("cross_entropy", 4)
    long_target["inputs"]["target_tokens"] = np.arange(5, dtype="<i8")
    fx.refuse("target_length", one("cross_entropy", long_target), 400,
              "target_tokens has shape [5]; its first dimension must be the datum's 4 input tokens")
    fx.refuse("topk_for_ppo", one("ppo", text_datum("ppo", 3, k=2)), 400, "only cross_entropy takes K targets")
    msg = build_request("cross_entropy", [text_datum("cross_entropy", 3)])
    msg.data[0].loss_fn_inputs["target_tokens"].shape[:] = [4]
    fx.refuse("values_vs_shape", msg.SerializeToString(deterministic=True), 400, "target_tokens has 3 values, but its shape [4] needs 4")
    msg = build_request("cross_entropy", [text_datum("cross_entropy", 3, extra=("weights",))])
    msg.data[0].loss_fn_inputs["weights"].dense = b"\0" * 7
    fx.refuse("odd_float_bytes", msg.SerializeToString(deterministic=True), 400, '.loss_fn_inputs["weights"].dense: 7 bytes of float32')

    def sparse_request(mutate):
        weights = np.asarray([[1, 0, 0], [0, 0, 2], [0, 0, 0], [3, 4, 0]], "<f4")
        d = datum([np.arange(4)], {"target_tokens": np.arange(12, dtype="<i8").reshape(4, 3), "weights": weights},
                  {"weights": "sparse"})
        msg = build_request("cross_entropy", [d])
        mutate(msg.data[0].loss_fn_inputs["weights"].sparse_csr)
        return msg.SerializeToString(deterministic=True)

    def set_crow(values):
        return lambda s: setattr(s, "crow_indices", np.asarray(values, "<i8").tobytes())

    def set_col(values):
        return lambda s: setattr(s, "col_indices", np.asarray(values, "<i8").tobytes())

    fx.refuse("csr_crow_count", sparse_request(set_crow([0, 1, 2, 4])), 400, "sparse_crow_indices has 4 entries")
    fx.refuse("csr_crow_decreasing", sparse_request(set_crow([0, 2, 1, 2, 4])), 400, "non-decreasing")
    fx.refuse("csr_col_outside", sparse_request(set_col([0, 3, 0, 1])), 400, "sparse_col_indices[1] is 3")
    fx.refuse("csr_cols_unsorted", sparse_request(set_col([0, 2, 1, 0])), 400, "row 3 must be strictly increasing")

    nan_weights = text_datum("cross_entropy", 4, extra=("weights",))
    nan_weights["inputs"]["weights"][2] = np.nan
    fx.refuse("nan_weight", one("cross_entropy", nan_weights), 400, "datum 0: loss_fn_inputs.weights[2] is NaN")
    inf_adv = text_datum("ppo", 4)
    inf_adv["inputs"]["advantages"][1] = -np.inf
    fx.refuse("infinite_advantage", one("ppo", inf_adv), 400, "loss_fn_inputs.advantages[1] is -Infinity")
    negative = text_datum("cross_entropy", 3)
    negative["chunks"] = [np.asarray([5, -1, 7], "<i4")]
    fx.refuse("negative_token", one("cross_entropy", negative), 400, "model_input token 1 is -1")
    huge = text_datum("cross_entropy", 3, k=2)
    huge["inputs"]["target_tokens"][2, 1] = 2**31
    fx.refuse("target_past_int32", one("cross_entropy", huge), 400, "loss_fn_inputs.target_tokens[2, 1] is 2147483648")

    fx.refuse("zstd_corrupt", b"\x28\xb5\x2f\xfd\x00\x58\xff\xff\xff\xff", 400, "zstd-compressed body is corrupt",
              encoding="zstd")
    zeros = bytes(32 << 20)
    streamed = zstandard.ZstdCompressor(write_content_size=False).compressobj()
    fx.refuse("zstd_bomb", streamed.compress(zeros) + streamed.flush(), 413, "expands to more than 1048576 bytes",
              encoding="zstd", limit=1 << 20)
    fx.refuse("zstd_bomb_declared", zstandard.compress(zeros), 413, "expands to more than 1048576 bytes",
              encoding="zstd", limit=1 << 20)
    # A frame header asking for a 1 GiB window (exponent 20), which fzstd would allocate before the first block.
    fx.refuse("zstd_huge_window", b"\x28\xb5\x2f\xfd\x00" + bytes([20 << 3]) + b"\x01\x00\x00", 400, "-byte window",
              encoding="zstd")
    fx.refuse("gzip", b"\x1f\x8b", 415, "Content-Encoding 'gzip' is not supported", encoding="gzip")


# ---- results -------------------------------------------------------------------------------------------------------

PROTO_DTYPES = {"float32": pb.DTYPE_FLOAT32, "int64": pb.DTYPE_INT64, "int32": pb.DTYPE_INT32}
NUMPY = {"float32": "<f4", "int64": "<i8", "int32": "<i4"}
SPECIAL_FLOAT32 = np.asarray(
    [-np.inf, np.nan, -0.0, 0.0, 1e-45, -1.17549435e-38, 3.4028235e38, -3.4028235e38, 0.1, -0.6931472, 1e-7,
     123456.79, -99999.0, 1e22, 5e-15], "<f4")


def from_wire(t: dict) -> np.ndarray:
    return np.frombuffer(base64.b64decode(t["data"]), NUMPY[t["dtype"]]).reshape(t["shape"])


def forward_cases() -> dict:
    def lp(*shape):
        return wire_tensor((rng.standard_normal(shape) - 3).astype("<f4"), "float32")

    return {
        "uniform": {"loss_fn_outputs": [{"logprobs": lp(5)}, {"logprobs": lp(3)}, {"logprobs": lp(1)}],
                    "metrics": {"loss:sum": 12.625, "tokens:sum": 9.0}},
        "ragged": {
            "loss_fn_outputs": [{"logprobs": lp(4, 3)}, {"logprobs": lp(2, 3)}, {"logprobs": lp(5, 2)},
                                {"logprobs": lp(1, 2)}, {"logprobs": lp(3, 3)}, {"logprobs": lp(2)}],
            "metrics": {"loss:sum": -1.0},
        },
        "mixed_dtypes": {
            "loss_fn_outputs": [
                {"logprobs": lp(3), "ranks": wire_tensor(np.asarray([1, 2, 3], "<i4"), "int32"),
                 "token_ids": wire_tensor(np.asarray([7, 2**40, 9], "<i8"), "int64")},
                {"logprobs": lp(2), "ranks": wire_tensor(np.asarray([0, -5], "<i4"), "int32"),
                 "token_ids": wire_tensor(np.asarray([1, 2], "<i8"), "int64")},
            ],
            "metrics": {},
        },
        "special_floats": {
            "loss_fn_outputs": [{"logprobs": wire_tensor(SPECIAL_FLOAT32, "float32")},
                                {"logprobs": wire_tensor(np.zeros(0, "<f4"), "float32")}],
            "metrics": {"a:mean": float("nan"), "b:max": float("inf"), "c:min": -0.0, "d:sum": 1e300},
        },
        "empty": {"loss_fn_outputs": [], "metrics": {"loss:sum": 0.0}},
        # The worker's dashboard stats: never sent to the SDK.
        "with_stats": {"loss_fn_outputs": [{"logprobs": lp(2)}], "metrics": {"loss:sum": 2.0},
                       "stats": {"num_tokens": 2, "seconds": 0.5}},
    }


def forward_proto(case: dict) -> bytes:
    """ForwardBackwardOutput as lib/tinker/results.ts must write it, serialized by the runtime."""
    msg = pb.ForwardBackwardOutput()
    msg.loss_fn_output_type = "ArrayRecord"
    outputs = case["loss_fn_outputs"]
    names = list(outputs[0]) if outputs else []

    def signature(d):
        return [(d[n]["dtype"], d[n]["shape"][1:]) for n in names]

    start = 0
    while start < len(outputs):
        end = start + 1
        while end < len(outputs) and signature(outputs[end]) == signature(outputs[start]):
            end += 1
        record = msg.loss_fn_outputs.add()
        record.type_tag = "ArrayRecord"
        record.num_datums = end - start
        for name in names:
            arrays = [base64.b64decode(outputs[i][name]["data"]) for i in range(start, end)]
            bt = record.fields[name]
            bt.data = b"".join(arrays)
            bt.offsets = np.cumsum([0] + [len(a) for a in arrays]).astype("<i8").tobytes()
            bt.dtype = PROTO_DTYPES[outputs[start][name]["dtype"]]
            bt.trailing_shape.extend(outputs[start][name]["shape"][1:])
        start = end
    for k, v in case["metrics"].items():
        msg.metrics[k] = v
    return msg.SerializeToString(deterministic=True)


def sample_cases() -> dict:
    return {
        "basic": {
            "sequences": [{"stop_reason": "stop", "tokens": [5, 6, 151643], "logprobs": [-0.5, -1.25, -0.0625]},
                          {"stop_reason": "length", "tokens": [9], "logprobs": [-3.1]}],
            "prompt_logprobs": [None, -2.5, -0.1], "topk_prompt_logprobs": None,
        },
        "topk": {
            "sequences": [{"stop_reason": "length", "tokens": [1, 2], "logprobs": [-0.2, -float("inf")]}],
            "prompt_logprobs": None,
            "topk_prompt_logprobs": [None, [[5, -0.1], [7, -2.5]], [[3, -0.5]], [[4, -1.0], [0, -3.0]]],
        },
        "empty_sequence": {"sequences": [{"stop_reason": "stop", "tokens": [], "logprobs": []}],
                           "prompt_logprobs": [None], "topk_prompt_logprobs": [None]},
    }


def sample_proto(case: dict) -> bytes:
    msg = pb.SampleResponse()
    for s in case["sequences"]:
        seq = msg.sequences.add()
        seq.stop_reason = pb.STOP_REASON_STOP if s["stop_reason"] == "stop" else pb.STOP_REASON_LENGTH
        seq.tokens = np.asarray(s["tokens"], "<i4").tobytes()
        seq.logprobs = np.asarray(s["logprobs"], "<f4").tobytes()
    if case["prompt_logprobs"] is not None:
        msg.prompt_logprobs = np.asarray([np.nan if v is None else v for v in case["prompt_logprobs"]], "<f4").tobytes()
    rows = case["topk_prompt_logprobs"]
    k = max((len(r) for r in rows or [] if r), default=0)
    if rows and k:
        ids = np.zeros((len(rows), k), "<i4")
        lps = np.full((len(rows), k), MASK_LOGPROB, "<f4")
        for i, row in enumerate(rows):
            for j, (token, value) in enumerate(row or []):
                ids[i, j], lps[i, j] = token, value
        topk = msg.topk_prompt_logprobs
        topk.token_ids, topk.logprobs, topk.k, topk.prompt_length = ids.tobytes(), lps.tobytes(), k, len(rows)
    return msg.SerializeToString(deterministic=True)


def jsonable(v):
    """Strict JSON of `v`: non-finite floats as "__nan__", "__inf__", "__-inf__" (what the readers revive)."""
    if isinstance(v, float) and not math.isfinite(v):
        return "__nan__" if math.isnan(v) else ("__inf__" if v > 0 else "__-inf__")
    if isinstance(v, dict):
        return {k: jsonable(x) for k, x in v.items()}
    if isinstance(v, list):
        return [jsonable(x) for x in v]
    return v


def result_fixtures():
    forward = forward_cases()
    sample = sample_cases()
    doc = {
        "forward": {name: {"result": c, "proto": base64.b64encode(forward_proto(c)).decode()}
                    for name, c in forward.items()},
        "sample": {name: {"result": c, "proto": base64.b64encode(sample_proto(c)).decode()}
                   for name, c in sample.items()},
    }
    (OUT / "results.json").write_text(json.dumps(jsonable(doc), indent=1, allow_nan=False) + "\n")
    return forward, sample


# ---- lib/tinker/results.ts read back as the SDK reads it -----------------------------------------------------------

TS_RUNNER = """
import { readFileSync } from 'node:fs';
import { forwardResultJson, forwardResultProto, sampleResultJson, sampleResultProto } from './lib/tinker/results';
const input = JSON.parse(readFileSync(0, 'utf8'), (_k, v) => (v === '__nan__' ? NaN : v === '__inf__' ? Infinity
  : v === '__-inf__' ? -Infinity : v));
const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');
const out = { forward: {} as Record<string, unknown>, sample: {} as Record<string, unknown> };
for (const [k, c] of Object.entries(input.forward)) out.forward[k] = { json: forwardResultJson(c as never), proto: b64(forwardResultProto(c as never)) };
for (const [k, c] of Object.entries(input.sample)) out.sample[k] = { json: sampleResultJson(c as never), proto: b64(sampleResultProto(c as never)) };
process.stdout.write(JSON.stringify(out));
"""


def run_ts(forward: dict, sample: dict) -> dict:
    payload = json.dumps(jsonable({"forward": forward, "sample": sample}), allow_nan=False)
    done = subprocess.run(["npx", "tsx", "-e", TS_RUNNER], cwd=ROOT, input=payload, capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        sys.exit(f"lib/tinker/results.ts failed:\n{done.stderr}")
    return json.loads(done.stdout)


def same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal shapes and bit-equal values (so NaN, -0.0 and infinities count)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if a.dtype.kind == "f" or b.dtype.kind == "f":
        return np.array_equal(a.astype("<f4").view("<u4"), b.astype("<f4").view("<u4"))
    return np.array_equal(a.astype("<i8"), b.astype("<i8"))


def check_forward(name: str, case: dict, out: dict):
    want = [{k: from_wire(t) for k, t in d.items()} for d in case["loss_fn_outputs"]]
    # protobuf, as proto/response_conv.py reads it: per record, per field, slice by byte offsets, reshape.
    msg = pb.ForwardBackwardOutput.FromString(base64.b64decode(out["proto"]))
    assert msg.loss_fn_output_type.rsplit(":", 1)[-1] == "ArrayRecord", name
    got: list[dict] = []
    for record in msg.loss_fn_outputs:
        datums = [{} for _ in range(record.num_datums)]
        for field, bt in record.fields.items():
            np_dtype = {pb.DTYPE_FLOAT32: "<f4", pb.DTYPE_INT64: "<i8", pb.DTYPE_INT32: "<i4"}[bt.dtype]
            size = np.dtype(np_dtype).itemsize
            offsets = np.frombuffer(bt.offsets, "<i8")
            values = np.frombuffer(bt.data, np_dtype)
            assert len(offsets) == record.num_datums + 1, name
            trailing = list(bt.trailing_shape)
            for i in range(record.num_datums):
                flat = values[offsets[i] // size: offsets[i + 1] // size]
                width = int(np.prod(trailing)) if trailing else 1
                datums[i][field] = flat.reshape([flat.size // width if width else 0, *trailing])
        got.extend(datums)
    assert len(got) == len(want), name
    for g, w in zip(got, want):
        assert set(g) == set(w) and all(same(g[k], w[k]) for k in w), f"{name}: protobuf values differ"
    assert dict(msg.metrics).keys() == case["metrics"].keys(), name
    for k, v in case["metrics"].items():
        got_metric = msg.metrics[k]
        assert struct.pack("<d", got_metric) == struct.pack("<d", v) or (math.isnan(v) and math.isnan(got_metric)), name

    # JSON, as 0.24's pydantic TensorData: numbers read by Python's json, narrowed to the dtype by numpy.
    doc = json.loads(out["json"])
    assert set(doc) == {"loss_fn_output_type", "loss_fn_outputs", "metrics"}, f"{name}: {sorted(doc)}"
    assert len(doc["loss_fn_outputs"]) == len(want), name
    for g, w in zip(doc["loss_fn_outputs"], want):
        for k, t in g.items():
            dtype = "<f4" if t["dtype"] == "float32" else "<i8"
            assert same(np.asarray(t["data"], dtype).reshape(t["shape"]), w[k]), f"{name}: JSON {k} differs"
    for k, v in case["metrics"].items():
        assert doc["metrics"][k] == v or (math.isnan(v) and math.isnan(doc["metrics"][k])), name


def check_sample(name: str, case: dict, out: dict):
    # protobuf, as deserialize_sample_response reads it.
    msg = pb.SampleResponse.FromString(base64.b64decode(out["proto"]))
    assert len(msg.sequences) == len(case["sequences"]), name
    for seq, want in zip(msg.sequences, case["sequences"]):
        assert ["stop", "length"][seq.stop_reason] == want["stop_reason"], name
        assert np.frombuffer(seq.tokens, "<i4").tolist() == want["tokens"], name
        if want["logprobs"]:
            assert same(np.frombuffer(seq.logprobs, "<f4"), np.asarray(want["logprobs"], "<f4")), name
        else:
            assert seq.logprobs == b"", name
    if case["prompt_logprobs"] is None:
        assert not msg.prompt_logprobs, name
    else:
        got = np.frombuffer(msg.prompt_logprobs, "<f4")
        assert [None if math.isnan(v) else v for v in got.tolist()] == [
            None if v is None else float(np.float32(v)) for v in case["prompt_logprobs"]], name
    rows = case["topk_prompt_logprobs"]
    if msg.HasField("topk_prompt_logprobs"):
        topk = msg.topk_prompt_logprobs
        ids = np.frombuffer(topk.token_ids, "<i4").reshape(topk.prompt_length, topk.k)
        lps = np.frombuffer(topk.logprobs, "<f4").reshape(topk.prompt_length, topk.k)
        got_rows = []
        for i in range(topk.prompt_length):
            pairs = [(int(t), float(v)) for t, v in zip(ids[i], lps[i])]
            while pairs and pairs[-1] == (0, MASK_LOGPROB):
                pairs.pop()
            got_rows.append(pairs or None)
        assert got_rows == [[(t, float(np.float32(v))) for t, v in r] if r else None for r in rows], name
    else:
        assert not rows or not any(rows), name

    # JSON, as 0.24's pydantic SampleResponse.
    doc = json.loads(out["json"])
    assert doc["type"] == "sample" and doc["prompt_cache_hit_tokens"] == 0, name
    for seq, want in zip(doc["sequences"], case["sequences"]):
        assert seq["stop_reason"] == want["stop_reason"] and seq["tokens"] == want["tokens"], name
        assert same(np.asarray(seq["logprobs"], "<f4"), np.asarray(want["logprobs"], "<f4")), name
    def f32(values):
        return None if values is None else [None if v is None else float(np.float32(v)) for v in values]

    def f32_rows(rows):
        return None if rows is None else [None if r is None else [[t, f32([v])[0]] for t, v in r] for r in rows]

    assert f32(doc["prompt_logprobs"]) == f32(case["prompt_logprobs"]), name
    assert f32_rows(doc["topk_prompt_logprobs"]) == f32_rows(rows), name


def check_ts(forward: dict, sample: dict) -> int:
    # Float32 sweep: random bit patterns (every exponent), neighbours of powers of ten, the special values.
    bits = rng.integers(0, 2**32, 20000, dtype=np.uint64).astype("<u4")
    sweep = np.concatenate([bits.view("<f4"), SPECIAL_FLOAT32,
                            np.nextafter(np.float32(10.0) ** np.arange(-38, 38, dtype=np.float32), np.float32(np.inf))])
    sweep = sweep[~np.isnan(sweep)].astype("<f4")
    forward = dict(forward, sweep={"loss_fn_outputs": [{"logprobs": wire_tensor(sweep, "float32")}], "metrics": {}})
    out = run_ts(forward, sample)
    for name, case in forward.items():
        check_forward(name, case, out["forward"][name])
    for name, case in sample.items():
        check_sample(name, case, out["sample"][name])
    return len(sweep)


# ---- the SDK's descriptor ------------------------------------------------------------------------------------------


def compare_sdk_descriptor(pb2_path: Path):
    """Reads the serialized FileDescriptorProto a tinker_public_pb2.py embeds (without importing it) and compares it
    with ours: package, enums, and per message every field's number, name, label, type, type name, oneof and
    proto3 optional flag."""
    blob = None
    for node in ast.walk(ast.parse(pb2_path.read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "AddSerializedFile":
            blob = node.args[0].value
    if blob is None:
        sys.exit(f"no serialized descriptor in {pb2_path}")

    def outline(fd):
        out = {"package": fd.package, "syntax": fd.syntax}
        for e in fd.enum_type:
            out[f"enum {e.name}"] = sorted((v.name, v.number) for v in e.value)

        def walk(messages, prefix):
            for m in messages:
                out[f"message {prefix}{m.name}"] = {
                    "fields": sorted(
                        (f.number, f.name, f.label, f.type, f.type_name,
                         m.oneof_decl[f.oneof_index].name if f.HasField("oneof_index") else None, f.proto3_optional)
                        for f in m.field),
                    "map_entry": m.options.map_entry,
                }
                walk(m.nested_type, f"{prefix}{m.name}.")

        walk(fd.message_type, "")
        return out

    sdk = outline(descriptor_pb2.FileDescriptorProto.FromString(blob))
    ours = outline(descriptor_pb2.FileDescriptorProto.FromString(pb.DESCRIPTOR.serialized_pb))
    diffs = [k for k in sorted(set(sdk) | set(ours)) if sdk.get(k) != ours.get(k)]
    for k in diffs:
        print(f"differs: {k}\n  sdk:  {sdk.get(k)}\n  ours: {ours.get(k)}")
    print(f"descriptor: {len(sdk)} enums and messages in the SDK's, {len(ours)} in ours, {len(diffs)} differ")
    if diffs:
        sys.exit(1)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sdk-pb2", type=Path, help="a tinker SDK's proto/tinker_public_pb2.py to compare with")
    args = parser.parse_args()
    if args.sdk_pb2:
        compare_sdk_descriptor(args.sdk_pb2)
    requests = request_fixtures()
    forward, sample = result_fixtures()
    # In the repository's JSON style, so that `npm run lint` (prettier --check .) passes.
    subprocess.run(["npx", "prettier", "--log-level", "warn", "--write", str(OUT / "requests.json"),
                    str(OUT / "results.json")], cwd=ROOT, check=True)
    print(f"wrote {requests} request bodies, {len(forward)} forward and {len(sample)} sample result cases to {OUT}")
    swept = check_ts(forward, sample)
    print(f"lib/tinker/results.ts: every case and {swept} float32 values read back unchanged by the runtime and json")


if __name__ == "__main__":
    main()
