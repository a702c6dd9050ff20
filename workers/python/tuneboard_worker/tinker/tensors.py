"""Wire tensors between server and worker (docs/tinker.md §3.1): `{"dtype", "shape", "data"}`, data the base64 of
the little-endian bytes of the dense row-major array."""

from __future__ import annotations

import base64
import binascii
import math
from typing import Any

import numpy as np

from .errors import user_error

# The wire's dtype names and their little-endian numpy types; nothing else is accepted.
WIRE_DTYPES: dict[str, np.dtype] = {
    "float32": np.dtype("<f4"),
    "int64": np.dtype("<i8"),
    "int32": np.dtype("<i4"),
}


def decode_tensor(wire: Any, what: str) -> np.ndarray:
    """The array a wire tensor holds; `what` names it in the user error a malformed one gets."""
    if not isinstance(wire, dict) or not {"dtype", "shape", "data"} <= wire.keys():
        raise user_error(f"{what}: not a tensor (expected an object with dtype, shape and data)")
    dtype = WIRE_DTYPES.get(wire["dtype"])
    if dtype is None:
        raise user_error(f"{what}: dtype {wire['dtype']!r} is not one of {', '.join(WIRE_DTYPES)}")
    shape = wire["shape"]
    if not isinstance(shape, list) or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
        raise user_error(f"{what}: shape {shape!r} is not a list of non-negative integers")
    try:
        raw = base64.b64decode(wire["data"], validate=True)
    except (binascii.Error, TypeError, ValueError) as err:
        raise user_error(f"{what}: data is not base64 ({err})") from err
    if len(raw) != math.prod(shape) * dtype.itemsize:
        raise user_error(f"{what}: {len(raw)} bytes of data do not hold shape {shape} of {wire['dtype']}")
    # Native byte order for torch.from_numpy, and a copy that owns its memory (frombuffer's is read-only).
    return np.frombuffer(raw, dtype=dtype).reshape(shape).astype(dtype.newbyteorder("="), copy=True)


def encode_tensor(array: np.ndarray) -> dict[str, Any]:
    """A wire tensor of a float32, int64 or int32 array (anything else is a bug of the caller)."""
    name = {"float32": "float32", "int64": "int64", "int32": "int32"}[array.dtype.name]
    data = np.ascontiguousarray(array, dtype=WIRE_DTYPES[name]).tobytes()
    return {"dtype": name, "shape": list(array.shape), "data": base64.b64encode(data).decode("ascii")}
