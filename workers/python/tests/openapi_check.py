"""The worker's calls and the fake servers' answers, checked against the server's OpenAPI document.

openapi.json beside this file is the worker routes' part of the document the server serves at /v1/openapi.json,
written by scripts/openapi-document.ts; tests/api/openapi.test.ts (Vitest) fails when it is stale. `checked(handler)`
wraps a fake server (an httpx.MockTransport handler): every request the worker sends must name a documented route
and method, carry its required query parameters, and have a body its schema accepts; every answer the fake gives
must be one the route documents, with a body its schema accepts. So a fake cannot answer what the server never
would, and the worker cannot send what the server would refuse with a 422, without a test failing.

The validator covers the JSON Schema the document uses (zod's output: type, properties, required,
additionalProperties, items, enum, const, anyOf/oneOf/allOf, bounds, pattern, propertyNames, local $ref, the uuid
format) and raises on any other keyword instead of ignoring it, so a new kind of schema cannot pass unchecked.
The project does not depend on the jsonschema package: the device check runs these tests on machines that have
only the worker's own dependencies.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any, Callable

import httpx

DOCUMENT = json.loads((Path(__file__).parent / "openapi.json").read_text())

# Keywords that only describe: nothing to check.
_ANNOTATIONS = {"description", "default", "examples", "title", "contentMediaType", "deprecated", "readOnly", "writeOnly", "$schema", "id"}
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


class ContractError(AssertionError):
    """A request or an answer the OpenAPI document does not allow."""


# Every ContractError `checked` raised, kept because the worker may catch one (a job fails with its message) where
# the test would not see it: conftest's autouse fixture fails the test when this is not empty at its end.
VIOLATIONS: list[str] = []


def _type_ok(value: Any, t: str) -> bool:
    if t == "null":
        return value is None
    if t == "boolean":
        return isinstance(value, bool)
    if t == "string":
        return isinstance(value, str)
    if t == "array":
        return isinstance(value, list)
    if t == "object":
        return isinstance(value, dict)
    if isinstance(value, bool):  # Python's bool is an int; JSON's is not a number
        return False
    if t == "number":
        return isinstance(value, (int, float)) and math.isfinite(value)
    if t == "integer":
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    raise ContractError(f"openapi_check does not know the type {t!r}")


def errors(value: Any, schema: Any, where: str = "$", root: dict | None = None) -> list[str]:
    """What is wrong with `value` under `schema`, one line each, naming the place (`$.events[0].type`)."""
    root = DOCUMENT if root is None else root
    if schema is True or schema == {}:
        return []
    if schema is False:
        return [f"{where}: no value is allowed here"]
    out: list[str] = []
    for key, rule in schema.items():
        if key in _ANNOTATIONS:
            continue
        if key == "$ref":
            if not rule.startswith("#/"):
                raise ContractError(f"openapi_check resolves only local references, not {rule}")
            target: Any = root
            for part in rule[2:].split("/"):
                target = target[part]
            out += errors(value, target, where, root)
        elif key == "type":
            types = rule if isinstance(rule, list) else [rule]
            if not any(_type_ok(value, t) for t in types):
                return [f"{where}: {json.dumps(value)[:80]} is not of type {' or '.join(types)}"]
        elif key == "enum":
            if not any(value == v and type(value) is type(v) or (value is None and v is None) for v in rule):
                out.append(f"{where}: {value!r} is not one of {rule}")
        elif key == "const":
            if value != rule or type(value) is not type(rule):
                out.append(f"{where}: {value!r} is not {rule!r}")
        elif key in ("anyOf", "oneOf"):
            found = [errors(value, s, where, root) for s in rule]
            passing = sum(1 for e in found if not e)
            if passing == 0:
                # The alternative it came nearest to says what is wrong (a kind's const, a missing field).
                nearest = min(found, key=len)
                out.append(f"{where}: matches none of the {key} schemas; the nearest says: " + "; ".join(nearest))
            elif key == "oneOf" and passing > 1:
                out.append(f"{where}: {json.dumps(value)[:80]} matches {passing} of the oneOf schemas")
        elif key == "allOf":
            for s in rule:
                out += errors(value, s, where, root)
        elif key == "not":
            if not errors(value, rule, where, root):
                out.append(f"{where}: {json.dumps(value)[:80]} matches a schema it must not")
        elif key == "properties":
            if isinstance(value, dict):
                for name, sub in rule.items():
                    if name in value:
                        out += errors(value[name], sub, f"{where}.{name}", root)
        elif key == "required":
            if isinstance(value, dict):
                out += [f"{where}: {name} is required" for name in rule if name not in value]
        elif key == "additionalProperties":
            if isinstance(value, dict):
                known = schema.get("properties", {})
                for name, v in value.items():
                    if name in known:
                        continue
                    if rule is False:
                        out.append(f"{where}: {name} is not a property of this object")
                    else:
                        out += errors(v, rule, f"{where}.{name}", root)
        elif key == "propertyNames":
            if isinstance(value, dict):
                for name in value:
                    out += errors(name, rule, f"{where} (the name {name!r})", root)
        elif key == "items":
            if isinstance(value, list):
                start = len(schema.get("prefixItems", []))
                for i, item in enumerate(value[start:], start):
                    out += errors(item, rule, f"{where}[{i}]", root)
        elif key == "prefixItems":
            if isinstance(value, list):
                for i, (item, sub) in enumerate(zip(value, rule)):
                    out += errors(item, sub, f"{where}[{i}]", root)
        elif key in ("minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties"):
            size = {"Items": list, "Length": str, "Properties": dict}
            kind = next(t for s, t in size.items() if key.endswith(s))
            if isinstance(value, kind) and not isinstance(value, bool):
                n = len(value)
                if (key.startswith("min") and n < rule) or (key.startswith("max") and n > rule):
                    out.append(f"{where}: {key} is {rule}, the value has {n}")
        elif key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                bad = {
                    "minimum": value < rule,
                    "maximum": value > rule,
                    "exclusiveMinimum": value <= rule,
                    "exclusiveMaximum": value >= rule,
                }[key]
                if bad:
                    out.append(f"{where}: {value} breaks {key} {rule}")
        elif key == "pattern":
            if isinstance(value, str) and not re.search(rule, value):
                out.append(f"{where}: {value!r} does not match {rule}")
        elif key == "format":
            if rule != "uuid":
                raise ContractError(f"openapi_check does not know the format {rule!r}")
            if isinstance(value, str) and not _UUID.match(value):
                out.append(f"{where}: {value!r} is not a uuid")
        else:
            raise ContractError(f"openapi_check does not know the keyword {key!r} (at {where}): teach it, do not skip it")
    return out


def _operation(method: str, path: str) -> tuple[str, dict, dict[str, str]]:
    for template, ops in DOCUMENT["paths"].items():
        names: list[str] = []
        pattern = "^" + re.sub(r"\\\{(\w+)\\\}", lambda m: (names.append(m.group(1)), "([^/]+)")[1], re.escape(template)) + "$"
        m = re.match(pattern, path)
        if m:
            op = ops.get(method.lower())
            if op is None:
                raise ContractError(f"{method} {path}: the document has no {method} for {template}")
            return template, op, dict(zip(names, m.groups()))
    raise ContractError(f"{method} {path}: no route of the document has this path")


def _json(text: bytes, what: str) -> Any:
    def refuse(constant: str) -> Any:
        raise ContractError(f"{what}: {constant} is not JSON")

    try:
        return json.loads(text, parse_constant=refuse)
    except ValueError as e:
        raise ContractError(f"{what}: not JSON ({e})") from None


def check_request(req: httpx.Request) -> None:
    template, op, _ = _operation(req.method, req.url.path)
    what = f"{req.method} {template}"
    for param in op.get("parameters", []):
        if param["in"] != "query":
            continue
        value = req.url.params.get(param["name"])
        if value is None:
            if param.get("required"):
                raise ContractError(f"{what}: the query parameter {param['name']} is required")
            continue
        problems = errors(value, param["schema"], f"?{param['name']}")
        if problems:
            raise ContractError(f"{what}: " + "; ".join(problems))
    body = op.get("requestBody")
    if body is None:
        if req.content:
            raise ContractError(f"{what} takes no body")
        return
    content_type = req.headers.get("content-type", "").split(";")[0].strip()
    if content_type not in body["content"]:
        raise ContractError(f"{what}: a {content_type or 'typeless'} body, the route takes {list(body['content'])}")
    schema = body["content"][content_type].get("schema")
    if content_type == "application/json" and schema is not None:
        problems = errors(_json(req.content, what), schema)
        if problems:
            raise ContractError(f"{what} sent a body the server refuses: " + "; ".join(problems))


# A fake's answer that stands for something in front of the server (a proxy's 403, an HTML error page) carries
# this header: the document describes the server's answers only, so such an answer is not checked against it.
NOT_THE_SERVER = {"x-openapi-check": "not the server"}


def check_response(req: httpx.Request, res: httpx.Response) -> None:
    if res.headers.get("x-openapi-check") == NOT_THE_SERVER["x-openapi-check"]:
        return
    template, op, _ = _operation(req.method, req.url.path)
    what = f"{req.method} {template} answered {res.status_code}"
    documented = op["responses"].get(str(res.status_code))
    if documented is None:
        # 409 (the lease is lost) and 5xx are what the worker's retries are tested with; the document lists only the
        # answers a route declares. A 204 has no body to check (the weights route's "start from the base").
        if res.status_code == 204 or res.status_code == 409 or res.status_code >= 500:
            return
        raise ContractError(f"{what}, a status the document does not list ({sorted(op['responses'])})")
    content_type = res.headers.get("content-type", "").split(";")[0].strip()
    schema = documented.get("content", {}).get("application/json", {}).get("schema")
    if content_type != "application/json":
        # Files (weights, Tinker saves) come as bytes; the document gives them no schema.
        if schema not in (None, {}):
            raise ContractError(f"{what} with a {content_type or 'typeless'} body, the document says JSON")
        return
    if schema is not None:
        problems = errors(_json(res.content, what), schema)
        if problems:
            raise ContractError(f"{what} with a body the server never sends: " + "; ".join(problems))


def checked(handler: Callable[[httpx.Request], httpx.Response]) -> Callable[[httpx.Request], httpx.Response]:
    """A MockTransport handler that checks each request before the fake sees it and each answer the fake gives.
    Connection errors the fake raises (to test retries) pass through."""

    def call(req: httpx.Request) -> httpx.Response:
        try:
            check_request(req)
            res = handler(req)
            res.read()
            check_response(req, res)
        except ContractError as e:
            VIOLATIONS.append(str(e))
            raise
        return res

    return call
