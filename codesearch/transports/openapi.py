"""The HTTP surface: one route per API method (`POST /v1/codebase/<method>`, GET for those
that take nothing) and its OpenAPI 3.1 description, written from the same records that check
the requests, so the description cannot drift from what the server accepts and answers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import __version__
from ..api.methods import METHODS
from ..api.types import Empty
from ..wire import json_schema

PREFIX = "/v1/codebase/"
HEALTH_PATH = "/health"
OPENAPI_PATH = "/openapi.json"
NOT_OVER_HTTP = frozenset({"shutdown", "health"})  # shutdown is the owner's (socket); health has its own path


@dataclass(frozen=True)
class Route:
    verb: str
    method: str | None  # the API method served; None: the OpenAPI document itself


def routes() -> dict[str, Route]:
    table = {PREFIX + name: Route("GET" if m.request is Empty else "POST", name)
             for name, m in METHODS.items() if name not in NOT_OVER_HTTP}
    table[HEALTH_PATH] = Route("GET", "health")
    table[OPENAPI_PATH] = Route("GET", None)
    return table


ERRORS = {
    "400": "The request cannot be answered as asked: not JSON, a missing or wrong field (the message names it), "
           "or ambiguous framing (two Content-Length headers, Transfer-Encoding with Content-Length).",
    "401": "The server has a token and the request did not carry it as `Authorization: Bearer TOKEN`.",
    "403": "A path outside the repository, or one it keeps private (.git, the index folder, an ignored file that "
           "looks like a secret); or a request to a loopback server without a token not addressed to localhost.",
    "404": "No such endpoint, or no such file, line or chunk id in the repository.",
    "405": "The endpoint takes the other HTTP method (the `Allow` header names it).",
    "411": "A chunked body: send a Content-Length.",
    "413": "The body is larger than 1 MiB.",
    "415": "A POST without Content-Type: application/json (body or not).",
    "500": "A bug: the message says which exception; the daemon's log has the rest.",
    "503": "The index cannot answer now (busy, or being rebuilt): try again after Retry-After seconds.",
}
ERROR_HEADERS = {"401": "WWW-Authenticate", "405": "Allow", "503": "Retry-After"}  # sent with every such answer
ERROR_SCHEMA = {
    "type": "object", "required": ["error"], "additionalProperties": False,
    "properties": {"error": {"type": "object", "required": ["code", "message"], "additionalProperties": False,
                             "properties": {"code": {"type": "string"}, "message": {"type": "string"}}}}}


def _json(schema: dict) -> dict:
    return {"application/json": {"schema": schema}}


def _operation(name: str, route: Route) -> dict[str, Any]:
    if route.method is None:
        return {"operationId": "openapi", "summary": "This description.",
                "responses": {"200": {"description": "OpenAPI 3.1", "content": _json({"type": "object"})}}}
    method = METHODS[route.method]
    errors = {code: {"description": text, "content": _json({"$ref": "#/components/schemas/Error"})}
              for code, text in ERRORS.items()}
    for code, header in ERROR_HEADERS.items():
        errors[code]["headers"] = {header: {"required": True, "schema": {"type": "string"}}}
    op: dict[str, Any] = {
        "operationId": name, "summary": method.summary,
        "responses": {"200": {"description": "The answer: the same JSON as the CLI's --json and the socket's.",
                              "content": _json(json_schema(method.answer))}, **errors}}
    if route.verb == "POST":  # a body is required: `{}` where every field is optional (see 415)
        op["requestBody"] = {"required": True, "content": _json(json_schema(method.request))}
    return op


def openapi_document(server_url: str, secured: bool = False) -> dict[str, Any]:
    paths = {path: {route.verb.lower(): _operation(path.rsplit("/", 1)[-1].replace(".json", ""), route)}
             for path, route in routes().items()}
    document = {
        "openapi": "3.1.0",
        "info": {"title": "codesearch", "version": __version__,
                 "description": "Local code search over one repository: the daemon's methods over HTTP."},
        "servers": [{"url": server_url}],
        "paths": paths,
        "components": {
            "schemas": {"Error": ERROR_SCHEMA},
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
    }
    if secured:
        document["security"] = [{"bearer": []}]
    return document
