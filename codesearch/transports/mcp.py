"""`codesearch mcp`: the API's methods as MCP tools over stdio, through the repository's daemon
(started when none runs), so every agent session shares one warm index and model.

Each tool is a method of the API table with an input schema written from the same record that
checks it, a description written for an agent, and the method's JSON answer as both the text
and the structured content of the result. A request the API refuses, a name that means nothing
and a daemon that cannot answer are tool errors (`isError`) with one line the agent can act on.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from .. import __version__
from ..api.methods import METHODS
from ..api.protocol import ServiceUnavailable
from ..api.types import GrepRequest, SearchRequest
from ..daemon.client import DaemonBusy, DaemonError
from ..daemon.lifecycle import DaemonTarget
from ..daemon.session import DaemonSession
from ..filters import Filters
from ..wire import Record, RequestError, json_schema
from ..workspace import Workspace

log = logging.getLogger("codesearch.mcp")

INSTRUCTIONS = (
    "codesearch indexes this repository (functions, classes and files; a call graph) and keeps the index fresh as "
    "files change. Use `search` first for any question about where or how something is done, in words or by name: "
    "it ranks by meaning and by name, so it finds code whose words differ from the question, which grep cannot. "
    "Use `grep` for exact text or a regex (its matches come grouped by function and ranked), `definition` for a "
    "known name, `callers`/`callees`/`impact` for relations, and `read` to see the code. Results give path and "
    "lines; snippets are short on purpose."
)

SEARCH_FILTERS = ("language", "kind", "path_glob")
GREP_FILTERS = ("language", "path_glob")
HIDDEN = frozenset({"filters", "explain", "truncated"})


@dataclass(frozen=True)
class Tool:
    name: str
    method: str  # the API method it calls
    description: str
    read_only: bool = True
    # tool arguments -> the method's params (the search tool takes its filters at the top level)
    params: Callable[[dict[str, Any]], dict[str, Any]] = field(default=lambda arguments: arguments)
    schema: Callable[[], dict[str, Any]] | None = None  # default: the method's request schema

    @cached_property
    def input_schema(self) -> dict[str, Any]:
        """What the tool publishes, and what `unknown_argument` checks arguments against. Rules
        between fields (a path or an id) stay out: agents' APIs refuse anyOf and oneOf at the top
        of a tool's schema; the method's own check still applies them."""
        if self.schema is not None:
            return self.schema()
        return json_schema(METHODS[self.method].request, between_fields=False)

    def unknown_argument(self, arguments: dict[str, Any]) -> str | None:
        """Why the arguments name a field the tool does not publish, or None."""
        known = self.input_schema["properties"]
        unknown = sorted(set(arguments) - set(known))
        if not unknown:
            return None
        return f"arguments: unknown field {unknown[0]!r}; known: {', '.join(known)}"

    def output_schema(self) -> dict[str, Any]:
        return json_schema(METHODS[self.method].answer)


def _flat_schema(request: type[Record], names: tuple[str, ...]) -> Callable[[], dict[str, Any]]:
    """The request's schema with the named filters at the top level (one level less for an agent)."""
    def schema() -> dict[str, Any]:
        out = json_schema(request, omit=HIDDEN, between_fields=False)
        filters = json_schema(Filters)["properties"]
        out["properties"].update({name: filters[name] for name in names})
        return out
    return schema


def _flat_params(names: tuple[str, ...]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """Tool arguments with top-level filters -> the request's params (filters nested again)."""
    def params(arguments: dict[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in arguments.items() if k not in names}
        chosen = {k: arguments[k] for k in names if arguments.get(k) is not None}
        if chosen:
            out["filters"] = chosen
        return out
    return params


TOOLS: tuple[Tool, ...] = (
    Tool("search", "search",
         "Find code in this repository by what it does or by name: a question in words (\"where is the retry "
         "backoff computed\"), an identifier (HTTPException), or a relation (\"who calls parse_config\"). Prefer it "
         "to grep whenever the exact text is unknown. Answers are ranked chunks (function, method, class or "
         "file) with path, start_line/end_line, kind, qualified_name, signature, a short snippet and score; "
         "`files: true` gives one result per file. `stale` marks a file changed since it was indexed, `partial` "
         "an answer made before every chunk had its vector. `max_tokens` caps the answer's size.",
         params=_flat_params(SEARCH_FILTERS), schema=_flat_schema(SearchRequest, SEARCH_FILTERS)),
    Tool("grep", "grep",
         "Find exact text or a regular expression (ripgrep's syntax) in this repository: an error message, a "
         "config key, every use of an identifier. Use it when the exact text is known; use `search` when it is "
         "not. Each match has path, line, column, the line's text and the chunk it sits in (kind, qualified "
         "name, lines); matches come grouped by chunk, the matched name's definition first, then central code, "
         "tests and vendored code last (`sort: path` for file order). `files` lists every matching file with "
         "its count; `fixed` takes the pattern literally, `word` matches whole words, `before`/`after` add "
         "context lines, `limit` caps the lines returned.",
         params=_flat_params(GREP_FILTERS), schema=_flat_schema(GrepRequest, GREP_FILTERS)),
    Tool("callers", "callers",
         "Who calls a function or method: the definitions whose code calls `name` (bare or qualified), `depth` "
         "hops out, nearest first. `targets` lists every definition the name means; when there are several, the "
         "results cover them all and `note` says so: ask again with a qualified name to narrow."),
    Tool("callees", "callees",
         "What a function or method calls: the definitions that `name`'s code calls, `depth` hops out. Same "
         "fields as `callers`."),
    Tool("impact", "impact",
         "What may break if `name` changes: its callers, their callers and so on (`depth` hops, default 3), "
         "grouped by file, the files with the nearest callers first. Use it before changing a signature."),
    Tool("definition", "definition",
         "Where `name` is defined: each definition's path, lines, kind, qualified name, signature and docstring, "
         "exact qualified matches first. A name that means nothing gets near names in `note`."),
    Tool("read", "read",
         "Read source from this repository: `path` with optional start_line/end_line (at most 2,000 lines), or "
         "the `id` of a search result for exactly that chunk. Only files inside the repository."),
    Tool("status", "status",
         "The index's state: files, chunks, the share with vectors (`embedded_share`), changes waiting to be "
         "indexed (`pending_changes`; `stale` true while any wait), the last reindex. Check it when answers "
         "seem to miss recent edits."),
)
TOOLS_BY_NAME = {t.name: t for t in TOOLS}


def _names_nothing(answer: dict[str, Any]) -> bool:
    """A relation, impact or definition answer for a name the index does not know."""
    return ("targets" in answer and not answer["targets"]) or ("definitions" in answer and not answer["definitions"])


class ToolError(Exception):
    """A tool call that failed in a way the agent should read (one line)."""


class CodeSearchTools:
    """The tools over one repository's daemon; transport-free, so tests and other servers can
    call them directly."""

    def __init__(self, session: DaemonSession):
        self.session = session

    def call(self, name: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
        """The method's JSON answer, or ToolError."""
        tool = TOOLS_BY_NAME.get(name)
        if tool is None:
            raise ToolError(f"unknown tool {name!r}; the tools are {', '.join(TOOLS_BY_NAME)}")
        method = METHODS[tool.method]
        arguments = dict(arguments or {})
        unknown = tool.unknown_argument(arguments)
        if unknown:
            raise ToolError(unknown)
        try:
            request = method.request.from_dict(tool.params(arguments), "arguments")
            answer = self.session.call(lambda client: method.call(client, request))
        except RequestError as exc:
            raise ToolError(str(exc)) from None
        except DaemonError as exc:
            raise ToolError(str(exc).removeprefix("invalid params: ")) from None
        except (ServiceUnavailable, DaemonBusy, OSError) as exc:
            raise ToolError(str(exc)) from None
        result = answer.to_dict()
        if _names_nothing(result):
            raise ToolError(result.get("note") or f"nothing is named {getattr(request, 'name', '')!r}")
        return result


def build_server(tools: CodeSearchTools):
    """The MCP server object (the SDK's low-level server: the schemas are ours)."""
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server

    listed = [types.Tool(name=t.name, description=t.description, input_schema=t.input_schema,
                         output_schema=t.output_schema(),
                         annotations=types.ToolAnnotations(read_only_hint=t.read_only, open_world_hint=False))
              for t in TOOLS]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            answer = await anyio.to_thread.run_sync(tools.call, params.name, params.arguments,
                                                    abandon_on_cancel=True)
        except ToolError as exc:
            return types.CallToolResult(content=[types.TextContent(text=str(exc))], is_error=True)
        except Exception as exc:  # a bug: say so in one line, keep serving
            log.exception("tool %s failed", params.name)
            return types.CallToolResult(content=[types.TextContent(text=f"internal error: {exc.__class__.__name__}: "
                                                                         f"{exc}")], is_error=True)
        text = json.dumps(answer, ensure_ascii=False, separators=(",", ":"))
        return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=answer)

    return Server("codesearch", version=__version__, instructions=INSTRUCTIONS,
                  on_list_tools=list_tools, on_call_tool=call_tool)


def serve_stdio(root: Path, index_dir: str | None = None, start: bool = True,
                workspace: Workspace | None = None) -> int:
    """Serve MCP on stdin/stdout until the client closes them (through the daemon of `root`, or
    of `workspace` when given). Logs go to stderr only."""
    import anyio
    from mcp.server.stdio import stdio_server

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="codesearch mcp: %(message)s")
    target = DaemonTarget.workspace(workspace) if workspace is not None else None
    session = DaemonSession(root, index_dir, start=start, target=target)
    session.begin()  # warm while the client initializes
    server = build_server(CodeSearchTools(session))

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)
    return 0
