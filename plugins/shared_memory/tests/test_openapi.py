"""/openapi.json is kept in sync with the app: the same routes and methods, valid schemas, every $ref resolves."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from jsonschema import Draft202012Validator
from shared_support import ThreadGateway
from starlette.routing import Route

from ego_shared_memory.config import GatewaySettings
from ego_shared_memory.gateway import build_app
from ego_shared_memory.openapi import openapi_document
from ego_shared_memory.store import open_store


def test_the_document_lists_exactly_the_served_routes(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'g.db'}")
    try:
        app = build_app(store, GatewaySettings())
        served = {
            (route.path, method.lower())
            for route in app.routes
            if isinstance(route, Route)
            for method in route.methods or ()
            if method != "HEAD"
        }
    finally:
        store.close()
    document = openapi_document()
    documented = {(path, method) for path, item in document["paths"].items() for method in item}
    assert served == documented


def test_every_schema_is_valid_and_every_reference_resolves() -> None:
    document = openapi_document()
    assert document["openapi"] == "3.1.0"
    for name, schema in document["components"]["schemas"].items():
        Draft202012Validator.check_schema(schema)
        assert name
    refs: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if "$ref" in node:
                refs.append(node["$ref"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(document)
    assert refs
    for ref in refs:
        name = ref.removeprefix("#/components/schemas/")
        assert name in document["components"]["schemas"], ref
    for path, item in document["paths"].items():
        for method, operation in item.items():
            assert operation["responses"], f"{method} {path} documents no response"
            for status, response in operation["responses"].items():
                assert status.isdigit()
                assert response["description"]


def test_the_example_event_fits_the_request_schema() -> None:
    from shared_support import EXAMPLES

    document = openapi_document()
    validator = Draft202012Validator({**document, "$ref": "#/components/schemas/MemoryEvent"})
    for example in EXAMPLES:
        validator.validate(example)


CLEANUP_SCOPE_ITEMS = (
    "*",
    "agent:*",
    "project:*",
    "global",
    "project:memory-gateway",
    "agent:claude",
    "",
    " ",
    " global",
    "global ",
    "global\n",
    "Global",
    "**",
    "global:*",
    "project:",
    "project:*x",
    "project:Upper",
    "project:" + "a" * 64,
    "project:" + "a" * 65,
    "agent:*claude",
    "agent:9lives",
    "agent:" + "a" * 33,
)


def ecma_patterns(node: Any) -> Any:
    """``node`` with each pattern's final ``$`` as ``\\Z``: what ``$`` means in ECMA-262, the patterns'
    dialect (Python's ``$``, which the validator uses, also matches before a final newline)."""
    if isinstance(node, dict):
        return {
            key: value[:-1] + r"\Z" if key == "pattern" and value.endswith("$") else ecma_patterns(value)
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [ecma_patterns(value) for value in node]
    return node


def test_the_cleanup_scopes_schema_states_what_the_gateway_enforces(
    gateway: ThreadGateway, token_for: Callable[..., str]
) -> None:
    """Each scope item and list length the schema allows is proposed (201); each it refuses is a 422."""
    validator = Draft202012Validator(ecma_patterns(openapi_document()["components"]["schemas"]["CleanupRequest"]))
    admin = {"Authorization": f"Bearer {token_for('ops', admin=True)}"}
    bodies = [{"older_than": "1d", "scopes": [item]} for item in CLEANUP_SCOPE_ITEMS]
    bodies += [{"older_than": "1d", "scopes": [f"project:p{n}" for n in range(count)]} for count in (32, 33)]
    outcomes = []
    with httpx.Client(base_url=gateway.url) as client:
        for body in bodies:
            answer = client.post("/v1/janitor/cleanup", json=body, headers=admin)
            assert answer.status_code in (201, 422), answer.text
            outcomes.append((body["scopes"][:2], validator.is_valid(body), answer.status_code == 201))
    assert [(scopes, valid) for scopes, valid, accepted in outcomes if valid != accepted] == []
    assert [scopes[0] for scopes, valid, _accepted in outcomes if valid] == [
        *CLEANUP_SCOPE_ITEMS[:6],
        "project:" + "a" * 64,
        "project:p0",  # the list of 32; the one of 33 is refused
    ]
