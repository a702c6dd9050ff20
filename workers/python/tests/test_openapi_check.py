"""openapi_check catches what the server would refuse or never send (its validator, and `checked` around a fake)."""

from __future__ import annotations

import httpx
import pytest

import openapi_check
from openapi_check import DOCUMENT, ContractError, checked, errors
from tuneboard_worker.client import WorkerClient

JOB = "00000000-0000-4000-8000-000000000001"


def fake(req: httpx.Request) -> httpx.Response:
    if req.url.path.endswith("/heartbeat"):
        return httpx.Response(200, json={"cancelled": False})
    return httpx.Response(200, json={"appended": 1})


def client(handler, worker_id: str = "w-1") -> WorkerClient:
    return WorkerClient("http://fake", "t", worker_id, transport=httpx.MockTransport(checked(handler)), sleep=lambda s: None)


def test_a_body_the_server_would_refuse_fails_and_is_recorded(openapi_contract):
    client(fake).heartbeat(JOB, {"gpu": "x"})  # what the server takes passes
    with pytest.raises(ContractError, match=r"heartbeat sent a body the server refuses: \$\.worker_id: minLength is 1"):
        client(fake, worker_id="").heartbeat(JOB)
    with pytest.raises(ContractError, match=r"\$\.info\.gpu: matches none of the anyOf schemas"):
        client(fake).heartbeat(JOB, {"gpu": {"name": "nested"}})
    # Recorded too, for the worker may catch it (a job failing with it) where the test would not see it.
    assert len(openapi_contract) == 2
    openapi_contract.clear()


def test_an_answer_the_server_never_gives_fails():
    with pytest.raises(ContractError, match=r"answered 200 with a body the server never sends: \$\.cancelled: \"no\" is not of type boolean"):
        client(lambda req: httpx.Response(200, json={"cancelled": "no"})).heartbeat(JOB)
    with pytest.raises(ContractError, match=r"\$: appended is required"):
        client(lambda req: httpx.Response(200, json={})).append_events(JOB, [{"type": "training_started", "data": {}}])
    with pytest.raises(ContractError, match="a status the document does not list"):
        client(lambda req: httpx.Response(418, json={"detail": "teapot"})).heartbeat(JOB)
    openapi_check.VIOLATIONS.clear()


def test_an_undocumented_route_or_method_or_missing_query_parameter_fails():
    http = httpx.Client(base_url="http://fake", transport=httpx.MockTransport(checked(fake)))
    with pytest.raises(ContractError, match="no route of the document has this path"):
        http.post("/v1/workers/jobs/x/heartbeats", json={"worker_id": "w"})
    with pytest.raises(ContractError, match="the document has no GET"):
        http.get(f"/v1/workers/jobs/{JOB}/heartbeat")
    with pytest.raises(ContractError, match="the query parameter worker_id is required"):
        http.get(f"/v1/workers/jobs/{JOB}/input")
    with pytest.raises(ContractError, match=r"\?file: 'model.bin' is not one of"):
        http.put(f"/v1/workers/jobs/{JOB}/checkpoint", params={"worker_id": "w", "file": "model.bin"}, content=b"x", headers={"content-type": "application/octet-stream"})
    with pytest.raises(ContractError, match="a application/json body, the route takes"):
        http.put(f"/v1/workers/jobs/{JOB}/checkpoint", params={"worker_id": "w"}, json={})
    with pytest.raises(ContractError, match="NaN is not JSON"):
        http.post(f"/v1/workers/jobs/{JOB}/heartbeat", content=b'{"worker_id": NaN}', headers={"content-type": "application/json"})
    openapi_check.VIOLATIONS.clear()


@pytest.mark.parametrize(
    "value, schema, wrong",
    [
        (True, {"type": "integer"}, "not of type integer"),  # JSON's booleans are not numbers
        (1.5, {"type": "integer"}, "not of type integer"),
        (1, {"enum": [True]}, "not one of"),
        ({"a": 1, "b": 2}, {"properties": {"a": {}}, "additionalProperties": False}, "b is not a property"),
        ({"a": "x"}, {"additionalProperties": {"type": "number"}}, "$.a: \"x\" is not of type number"),
        ([1, "x"], {"items": {"type": "number"}}, "$[1]"),
        ([], {"minItems": 1}, "minItems is 1"),
        ("abc", {"maxLength": 2}, "maxLength is 2"),
        (5, {"maximum": 4}, "breaks maximum 4"),
        ("nope", {"format": "uuid"}, "is not a uuid"),
        ({"kind": "sft"}, {"oneOf": [{"properties": {"kind": {"const": "rl"}}, "required": ["kind", "groups"]}, {"required": ["kind", "file"]}]}, "file is required"),
        ({"kind": "rl"}, {"oneOf": [{"type": "object"}, {"required": ["kind"]}]}, "matches 2 of the oneOf"),
        ({"x": 1}, {"$ref": "#/components/schemas/ErrorDetail"}, "detail is required"),
    ],
)
def test_the_validator_finds_each_kind_of_mistake(value, schema, wrong):
    found = errors(value, schema)
    assert any(wrong in e for e in found), found


def test_a_keyword_it_does_not_know_raises_instead_of_passing():
    with pytest.raises(ContractError, match="does not know the keyword 'dependentRequired'"):
        errors({}, {"dependentRequired": {"a": ["b"]}})


def test_every_schema_of_the_document_uses_only_keywords_it_knows():
    # Walks every schema with a value of each type, so a keyword zod starts emitting fails here, not in a fake.
    def schemas(node):
        if isinstance(node, dict):
            if "schema" in node:
                yield node["schema"]
            for v in node.values():
                yield from schemas(v)
        elif isinstance(node, list):
            for v in node:
                yield from schemas(v)

    found = list(schemas(DOCUMENT["paths"]))
    assert len(found) > 50
    for schema in found:
        for value in (None, True, 0, 1.5, "s", [], {}, {"a": [1]}):
            errors(value, schema)
