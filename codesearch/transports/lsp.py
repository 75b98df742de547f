"""`codesearch lsp`: a language server over stdio (pygls) for the workspace root that
`initialize` names, answered by that root's daemon (started unless `--no-start`).

workspace/symbol, call hierarchy, definition and references come from the index, so they work in
any of its languages, even where the language's own server is missing or slow; `codesearch/search`
(also `workspace/executeCommand codesearch.search`) is the API's search, params and answer
unchanged. Handlers run on pygls's thread pool: a slow or dead daemon never blocks the editor's
other requests, and `$/cancelRequest` drops an answer nobody waits for.
"""

from __future__ import annotations

import contextlib
import logging
import re
import sys
import threading
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer

from .. import __version__
from ..api.protocol import ServiceUnavailable
from ..api.types import (
    DefinitionRequest,
    ReferencesRequest,
    RelatedResult,
    RelationsRequest,
    SymbolsRequest,
)
from ..daemon.client import DaemonBusy, DaemonError
from ..daemon.lifecycle import DaemonTarget
from ..daemon.session import DaemonSession
from ..paths import OutsideRoot, confine, on_disk
from ..store.schema import RESOLUTIONS
from ..wire import RequestError
from ..workspace import WorkspaceError, workspace_of_paths
from .lsp_progress import TITLE, ProgressReporter

log = logging.getLogger("codesearch.lsp")
SEARCH_METHOD = "codesearch/search"
SEARCH_COMMAND = "codesearch.search"
GREP_METHOD = "codesearch/grep"
WORD = re.compile(r"[A-Za-z_$][\w$]*")
SYMBOL_LIMIT = 100
REFERENCE_LIMIT = 1000
PROGRESS_CREATE_SECONDS = 5.0  # the client's answer to window/workDoneProgress/create
# resolutions that beat a guess by name (search/requests.py RelatedResult.resolution): where a
# site or name has one of these, its name-only links are not shown
RESOLVED = frozenset(RESOLUTIONS) - {"name-only"}

SYMBOL_KINDS = {
    "class": lsp.SymbolKind.Class, "struct": lsp.SymbolKind.Struct, "interface": lsp.SymbolKind.Interface,
    "trait": lsp.SymbolKind.Interface, "protocol": lsp.SymbolKind.Interface, "enum": lsp.SymbolKind.Enum,
    "function": lsp.SymbolKind.Function, "method": lsp.SymbolKind.Method, "macro": lsp.SymbolKind.Function,
    "test": lsp.SymbolKind.Function, "module": lsp.SymbolKind.Module, "namespace": lsp.SymbolKind.Namespace,
    "impl": lsp.SymbolKind.Class, "object": lsp.SymbolKind.Object, "type": lsp.SymbolKind.TypeParameter,
    "record": lsp.SymbolKind.Struct, "union": lsp.SymbolKind.Struct, "extension": lsp.SymbolKind.Class,
    "instance": lsp.SymbolKind.Class, "file": lsp.SymbolKind.File, "section": lsp.SymbolKind.String,
}


def symbol_matches(query: str, name: str, qualified_name: str) -> bool:
    """Whether an editor's symbol search shows a definition for what was typed: the query's
    characters, in order and in any case, within the name (`pcfg` finds parse_config), or within
    the qualified name when the query holds a dot. The `symbols` method also ranks definitions
    whose words the query only resembles; a symbol list shows none of those."""
    chars = iter((qualified_name if "." in query else name).casefold())
    return all(c in chars for c in query.casefold() if not c.isspace())


class RequestFailed(JsonRpcException):
    """An LSP error reply with one line the editor shows."""

    def __init__(self, message: str, code: int = lsp.ErrorCodes.InvalidParams):
        super().__init__(message=message)
        self.code = code


class CodeSearchServer(LanguageServer):
    def __init__(self, start: bool = True, index_dir: str | None = None):
        super().__init__("codesearch", __version__, max_workers=8)
        self.start_daemon = start
        self.index_dir = index_dir
        self.session: DaemonSession | None = None
        self.root: Path | None = None
        self.roots: dict[str, Path] = {}  # several workspace folders: each repository's root by name
        self.warned_partial = False
        self.progress_reporter: ProgressReporter | None = None
        self.progress_token = 0
        self.client_capabilities_seen = lsp.ClientCapabilities()

    # --- plumbing ----------------------------------------------------------------------------
    def open_root(self, params: lsp.InitializeParams) -> None:
        """One folder: its daemon. Several workspace folders: one workspace daemon for them all
        (each folder a repository named after it), answers fused across them."""
        uri = None
        if params.workspace_folders:
            uri = params.workspace_folders[0].uri
        elif params.root_uri:
            uri = params.root_uri
        path = uri_to_path(uri) if uri else (Path(params.root_path) if params.root_path else None)
        if path is None or not path.is_dir():
            log.warning("no workspace folder in initialize; requests will fail")
            return
        self.root = path.resolve()
        folders = [p for p in (uri_to_path(f.uri) for f in params.workspace_folders or ()) if p and p.is_dir()]
        target = None
        if len(folders) > 1:
            try:
                workspace = workspace_of_paths(folders)
            except WorkspaceError as exc:
                log.warning("%s; serving %s alone", exc, self.root)
            else:
                self.roots = {r.name: r.root for r in workspace.repos}
                target = DaemonTarget.workspace(workspace)
        self.session = DaemonSession(self.root, self.index_dir, start=self.start_daemon, target=target)
        self.session.begin()

    # --- the daemon's work as $/progress ---------------------------------------------------------
    def report_progress(self, capabilities: lsp.ClientCapabilities) -> None:
        """Show the daemon's indexing and embedding, when the client takes server-made progress."""
        if self.session is None or not (capabilities.window and capabilities.window.work_done_progress):
            return
        session = self.session
        self.progress_reporter = ProgressReporter(lambda: session.client.status().to_dict(), self._progress_begin,
                                         self._progress_report, self._progress_end)
        self.progress_reporter.start()

    def _progress_begin(self, message: str, percentage: int | None) -> bool:
        self.progress_token += 1
        token = f"codesearch-{self.progress_token}"
        created = threading.Event()
        self.work_done_progress.create(token, lambda *_: created.set())
        if not created.wait(PROGRESS_CREATE_SECONDS):
            return False
        self.work_done_progress.begin(token, lsp.WorkDoneProgressBegin(
            title=TITLE, message=message, percentage=percentage, cancellable=False))
        return True

    def _progress_report(self, message: str, percentage: int | None) -> None:
        self.work_done_progress.report(f"codesearch-{self.progress_token}",
                                       lsp.WorkDoneProgressReport(message=message, percentage=percentage))

    def _progress_end(self, message: str) -> None:
        self.work_done_progress.end(f"codesearch-{self.progress_token}", lsp.WorkDoneProgressEnd(message=message))

    def call(self, method: str, request: Any) -> Any:
        """The API method through the daemon; failures become LSP errors (never a hang: the
        session bounds every wait)."""
        if self.session is None:
            raise RequestFailed("codesearch has no workspace folder: open a folder or pass a root URI",
                                lsp.ErrorCodes.ServerNotInitialized)
        from ..api.methods import METHODS
        try:
            return self.session.call(lambda client: METHODS[method].call(client, request))
        except RequestError as exc:
            raise RequestFailed(str(exc)) from None
        except DaemonError as exc:
            raise RequestFailed(str(exc).removeprefix("invalid params: ")) from None
        except (ServiceUnavailable, DaemonBusy, OSError) as exc:
            raise RequestFailed(str(exc), lsp.LSPErrorCodes.ContentModified) from None

    def relative(self, uri: str) -> str:
        """The index's path of a document URI inside the root, or an LSP error."""
        return self.placed(uri)[1]

    def placed(self, uri: str) -> tuple[str | None, str]:
        """(repository name in a workspace, else None; the index's path) of a document URI, or
        an LSP error when it lies outside every root."""
        assert self.root is not None
        path = uri_to_path(uri)
        if path is None:
            raise RequestFailed(f"codesearch serves file: URIs only, not {uri}")
        roots: dict[str | None, Path] = dict(self.roots.items()) or {None: self.root}
        for name, root in roots.items():
            with contextlib.suppress(OutsideRoot):
                return name, confine(root, str(path))
        raise RequestFailed(f"{path} is outside the workspace {self.root}")

    def location(self, path: str, line: int, column: int, length: int, end_line: int | None = None,
                 repo: str | None = None) -> lsp.Location:
        start = lsp.Position(max(line - 1, 0), max(column - 1, 0))
        end = lsp.Position(max((end_line or line) - 1, 0), max(column - 1 + length, 0) if end_line is None else 0)
        return lsp.Location(uri=selection_uri(self, path, repo), range=lsp.Range(start, end))

    def note_freshness(self, answer: Any) -> None:
        """A partial answer is told once, with why and the daemon's share; told again once the
        daemon has caught up (without progress polling: at the next whole answer)."""
        if not hasattr(answer, "partial"):
            return
        if answer.partial and not self.warned_partial:
            self.warned_partial = True
            share = answer.embedded_share if answer.embedded_share is not None else 0.0
            why = answer.note or "vectors are still being built"
            self.show_info(f"codesearch: partial results ({why}; {share:.0%} of chunks have vectors)")
            if self.progress_reporter is not None:
                self.progress_reporter.when_caught_up(self.caught_up)
        elif not answer.partial and self.warned_partial and self.progress_reporter is None:
            self.caught_up({})

    def caught_up(self, status: dict) -> None:
        """The correction of a partial answer's message: what answers use now."""
        self.warned_partial = False
        problem = status.get("model_error")
        self.show_info(f"codesearch: the embedding model could not be loaded ({problem}); results come from "
                       "keyword and graph" if problem else
                       f"codesearch: vectors ready ({status.get('embedded_share', 1.0):.0%} of chunks); "
                       "results are complete")

    def show_info(self, message: str) -> None:
        self.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Info, message=message))

    def word_at(self, uri: str, position: lsp.Position) -> str:
        document = self.workspace.get_text_document(uri)
        try:
            lines = document.lines
        except OSError:
            raise RequestFailed(f"cannot read {uri}") from None
        if position.line >= len(lines):
            return ""
        text = lines[position.line]
        for m in WORD.finditer(text):
            if m.start() <= position.character <= m.end():
                return m.group()
        return ""

    # --- items ------------------------------------------------------------------------------
    def hierarchy_item(self, d: Any) -> lsp.CallHierarchyItem:
        name_line = d.name_line or d.start_line
        name_column = d.name_column or 1
        selection = self.location(d.path, name_line, name_column, len(d.name), repo=d.repo).range
        full = lsp.Range(lsp.Position(d.start_line - 1, 0), lsp.Position(d.end_line, 0))
        return lsp.CallHierarchyItem(
            name=d.name, kind=SYMBOL_KINDS.get(d.kind, lsp.SymbolKind.Function),
            uri=selection_uri(self, d.path, d.repo), range=full, selection_range=selection, detail=d.qualified_name,
            data={"id": d.id})


def selection_uri(server: CodeSearchServer, path: str, repo: str | None = None) -> str:
    """A result's file URI: under its repository's root in a workspace."""
    root = server.roots.get(repo, server.root) if repo else server.root
    assert root is not None
    return on_disk(root, path).as_uri()


def uri_to_path(uri: str) -> Path | None:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return Path(unquote(parsed.path))


def _plain(value: Any) -> Any:
    """pygls hands a custom request's params over as namedtuples: back to JSON values."""
    if isinstance(value, tuple) and hasattr(value, "_asdict"):
        return {k: _plain(v) for k, v in value._asdict().items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def build_server(start: bool = True, index_dir: str | None = None) -> CodeSearchServer:
    server = CodeSearchServer(start=start, index_dir=index_dir)

    @server.feature(lsp.INITIALIZE)
    def initialize(ls: CodeSearchServer, params: lsp.InitializeParams) -> None:
        ls.open_root(params)  # starts the daemon in the background when none runs
        ls.client_capabilities_seen = params.capabilities

    @server.feature(lsp.INITIALIZED)
    def initialized(ls: CodeSearchServer, params: lsp.InitializedParams) -> None:
        ls.report_progress(ls.client_capabilities_seen)

    @server.feature(lsp.WORKSPACE_SYMBOL)
    @server.thread()
    def workspace_symbol(ls: CodeSearchServer, params: lsp.WorkspaceSymbolParams) -> list[lsp.SymbolInformation]:
        if not params.query.strip():
            return []
        answer = ls.call("symbols", SymbolsRequest(query=params.query, limit=SYMBOL_LIMIT))
        return [lsp.SymbolInformation(
            name=d.name, kind=SYMBOL_KINDS.get(d.kind, lsp.SymbolKind.Variable),
            location=ls.location(d.path, d.name_line or d.start_line, d.name_column or 1, len(d.name), repo=d.repo),
            container_name=d.qualified_name.rsplit(".", 1)[0] if "." in d.qualified_name else None)
            for d in answer.symbols if symbol_matches(params.query, d.name, d.qualified_name)]

    def definitions_at(ls: CodeSearchServer, uri: str, position: lsp.Position) -> tuple[str, list[Any]]:
        rel = ls.relative(uri)
        word = ls.word_at(uri, position)
        if not word:
            return "", []
        answer = ls.call("definition", DefinitionRequest(name=word, near=rel))
        return rel, list(answer.definitions)

    def resolved_at(ls: CodeSearchServer, place: tuple[str | None, str], line: int, word: str) -> list[RelatedResult]:
        """The definitions a call of `word` on this line (1-based) of a file (its repository and
        path) was resolved to by scope, type or import: [] where the site is unrecorded or only
        its name is known."""
        repo, rel = place
        sites = ls.call("references", ReferencesRequest(name=word, limit=REFERENCE_LIMIT)).references
        callers = sorted({r.caller_id for r in sites
                          if r.path == rel and r.repo == repo and r.line == line and r.resolution in RESOLVED})
        found: list[RelatedResult] = []
        for caller in callers:
            found += [r for r in ls.call("callees", RelationsRequest(name=word, id=caller)).results
                      if r.depth == 1 and r.name == word and r.resolution in RESOLVED and line in (r.sites or ())]
        return found

    @server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
    @server.thread()
    def definition(ls: CodeSearchServer, params: lsp.DefinitionParams) -> list[lsp.Location]:
        uri = params.text_document.uri
        place = ls.placed(uri)
        word = ls.word_at(uri, params.position)
        resolved = resolved_at(ls, place, params.position.line + 1, word) if word else []
        found = resolved or definitions_at(ls, uri, params.position)[1]
        return [ls.location(d.path, d.name_line or d.start_line, d.name_column or 1, len(d.name), repo=d.repo)
                for d in found]

    @server.feature(lsp.TEXT_DOCUMENT_REFERENCES)
    @server.thread()
    def references(ls: CodeSearchServer, params: lsp.ReferenceParams) -> list[lsp.Location]:
        ls.relative(params.text_document.uri)
        word = ls.word_at(params.text_document.uri, params.position)
        if not word:
            return []
        answer = ls.call("references", ReferencesRequest(name=word, limit=REFERENCE_LIMIT))
        out = [ls.location(r.path, r.line, r.column, len(word), repo=r.repo) for r in answer.references]
        if params.context.include_declaration:
            found = ls.call("definition", DefinitionRequest(name=word)).definitions
            out = [ls.location(d.path, d.name_line or d.start_line, d.name_column or 1, len(d.name), repo=d.repo)
                   for d in found] + out
        return out

    @server.feature(lsp.TEXT_DOCUMENT_PREPARE_CALL_HIERARCHY)
    @server.thread()
    def prepare(ls: CodeSearchServer, params: lsp.CallHierarchyPrepareParams) -> list[lsp.CallHierarchyItem] | None:
        rel, found = definitions_at(ls, params.text_document.uri, params.position)
        if not found:
            return None
        line = params.position.line + 1
        here = [d for d in found if d.path == rel and (d.name_line or d.start_line) == line]
        return [ls.hierarchy_item(d) for d in (here or found[:1])]

    def calls(ls: CodeSearchServer, item: lsp.CallHierarchyItem, direction: str) -> list[RelatedResult]:
        data = _plain(item.data) if item.data is not None else {}
        chunk_id = data.get("id") if isinstance(data, dict) else None
        request = RelationsRequest(name=item.name, id=chunk_id if isinstance(chunk_id, str) else None)
        return list(ls.call(direction, request).results)

    @server.feature(lsp.CALL_HIERARCHY_INCOMING_CALLS)
    @server.thread()
    def incoming(ls: CodeSearchServer,
                 params: lsp.CallHierarchyIncomingCallsParams) -> list[lsp.CallHierarchyIncomingCall]:
        out = []
        found = calls(ls, params.item, "callers")
        if any(r.resolution == "name-only" for r in found):  # a guess: did those sites resolve elsewhere?
            sites = ls.call("references", ReferencesRequest(name=params.item.name, limit=REFERENCE_LIMIT)).references
            elsewhere = {(r.caller_id, r.line) for r in sites if r.resolution in RESOLVED}
            found = [r for r in found if r.resolution != "name-only"
                     or not r.sites or not all((r.id, line) in elsewhere for line in r.sites)]
        for r in found:
            ranges = [ls.location(r.path, line, 1, 0, repo=r.repo).range for line in (r.sites or (r.start_line,))]
            out.append(lsp.CallHierarchyIncomingCall(from_=ls.hierarchy_item(r), from_ranges=ranges))
        return out

    @server.feature(lsp.CALL_HIERARCHY_OUTGOING_CALLS)
    @server.thread()
    def outgoing(ls: CodeSearchServer,
                 params: lsp.CallHierarchyOutgoingCallsParams) -> list[lsp.CallHierarchyOutgoingCall]:
        out = []
        item_repo, item_path = ls.placed(params.item.uri)
        found = calls(ls, params.item, "callees")
        resolved = {r.name for r in found if r.resolution in RESOLVED}
        for r in found:
            if r.resolution == "name-only" and r.name in resolved:
                continue  # the same name's calls resolved to a definition by scope, type or import
            ranges = [ls.location(item_path, line, 1, 0, repo=item_repo).range for line in (r.sites or ())]
            out.append(lsp.CallHierarchyOutgoingCall(to=ls.hierarchy_item(r), from_ranges=ranges))
        return out

    def api_request(ls: CodeSearchServer, method: str, raw: Any) -> dict:
        """A custom request: the API method's params in, its JSON answer out."""
        params = _plain(raw)
        if isinstance(params, list) and len(params) == 1:  # executeCommand's arguments
            params = params[0]
        from ..api.methods import METHODS
        try:
            request = METHODS[method].request.from_dict(params)
        except RequestError as exc:
            raise RequestFailed(str(exc)) from None
        answer = ls.call(method, request)
        ls.note_freshness(answer)
        return answer.to_dict()

    @server.feature(SEARCH_METHOD)
    @server.thread()
    def search_request(ls: CodeSearchServer, params: Any) -> dict:
        return api_request(ls, "search", params)

    @server.command(SEARCH_COMMAND)
    @server.thread()
    def search_command(ls: CodeSearchServer, arguments: Any) -> dict:
        return api_request(ls, "search", arguments)

    @server.feature(GREP_METHOD)
    @server.thread()
    def grep_request(ls: CodeSearchServer, params: Any) -> dict:
        return api_request(ls, "grep", params)

    return server


def serve_stdio(start: bool = True, index_dir: str | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="codesearch lsp: %(message)s")
    build_server(start, index_dir).start_io()
    return 0

