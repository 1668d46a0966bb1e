"""/openapi.json is kept in sync with the app: the same routes and methods, valid schemas, every $ref resolves."""

from __future__ import annotations

from pathlib import Path

from jsonschema import Draft202012Validator
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
