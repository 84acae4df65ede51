"""What FastAPI's generated OpenAPI schema cannot say by itself, added once when it is built:

* the API keys (``Authorization: Bearer``, ``X-API-Key``) as security schemes, required by every
  operation but the public ones (``/health``, the docs);
* links from the operations that create something to those that read, change or delete it (a new
  memory's id, a new collection's or document's name), so clients and fuzzers can follow them.

The server answers exactly what the schema says (``tests/server/test_fuzz_api.py`` checks it).
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

from memlane.server.middleware import PUBLIC_PATHS

SECURITY_SCHEMES = {
    "bearer": {"type": "http", "scheme": "bearer",
               "description": "an API key: `Authorization: Bearer <key>` (`Token <key>` works too)"},
    "apiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key", "description": "an API key"},
}

_MEMORY_ID = {"path.memory_id": "$response.body#/results/0/id"}
#: (path, method, status) of a creating operation -> [(path, method) of an operation it leads to, parameters]
LINKS: dict[tuple[str, str, str], list[tuple[str, str, dict[str, str]]]] = {
    **{(path, "post", "200"): [(target, method, _MEMORY_ID) for target, method in (
        ("/memories/{memory_id}", "get"), ("/memories/{memory_id}", "put"), ("/memories/{memory_id}/history", "get"),
        ("/memories/{memory_id}", "delete"), ("/v1/memories/{memory_id}/", "get"),
        ("/v1/memories/{memory_id}/history/", "get"), ("/v1/memories/{memory_id}/", "put"),
        ("/v1/memories/{memory_id}/", "delete"))]
       for path in ("/memories", "/v3/memories/add/", "/v1/memories/")},
    ("/collections", "post", "201"): [
        ("/collections/{collection_name}", method, {"path.collection_name": "$response.body#/name"})
        for method in ("get", "patch", "delete")],
    ("/documents/upsert", "post", "200"): [
        ("/documents/{document_name}", method, {"path.document_name": "$response.body#/name",
                                                "query.collection_name": "$response.body#/collection_name"})
        for method in ("get", "patch", "delete")],
}


def install(app: FastAPI) -> None:
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = complete(generate())
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def complete(schema: dict[str, Any]) -> dict[str, Any]:
    schema.setdefault("components", {})["securitySchemes"] = SECURITY_SCHEMES
    paths = schema.get("paths", {})
    for path, operations in paths.items():
        for operation in operations.values():
            operation["security"] = [] if path in PUBLIC_PATHS else [{"bearer": []}, {"apiKey": []}]
    for (path, method, status), targets in LINKS.items():
        response = paths.get(path, {}).get(method, {}).get("responses", {}).get(status)
        if response is None:
            continue
        links = response.setdefault("links", {})
        for target, target_method, parameters in targets:
            operation = paths.get(target, {}).get(target_method)
            if operation is not None:
                links[operation["operationId"]] = {"operationId": operation["operationId"], "parameters": parameters}
    return schema
