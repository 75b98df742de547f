"""`codesearch lsp` driven by pytest-lsp's client against a real daemon on a copy of the sample
repository: symbols, call hierarchy both ways, definition, references, the custom search, an
edit after start, and bad input (URIs, positions, files outside the root, cancellation, a
daemon that dies)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time

import pytest
import pytest_lsp
from daemon_helpers import REPO_ROOT, SUITE_SETTINGS, pid_gone, seed_repo, seeded_daemon, wait_for, write  # noqa: F401
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from codesearch.transports.lsp import symbol_matches

ENV = {**{k: v for k, v in os.environ.items() if not k.startswith("CODESEARCH_") or k in SUITE_SETTINGS},
       "PYTHONPATH": str(REPO_ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


@pytest.fixture(scope="module")
def lsp_daemon(request, seed_repo):
    return seeded_daemon(request, seed_repo)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "codesearch.cli", "lsp"],
                                              server_env=ENV))
async def client(lsp_client: LanguageClient, request):
    root = request.getfixturevalue("lsp_daemon").root
    await lsp_client.initialize_session(lsp.InitializeParams(
        capabilities=client_capabilities("neovim"), root_uri=root.as_uri(),
        workspace_folders=[lsp.WorkspaceFolder(uri=root.as_uri(), name="repo")]))
    yield
    await lsp_client.shutdown_session()


def uri(daemon, rel: str) -> str:
    return (daemon.root / rel).as_uri()


def doc(daemon, rel: str) -> lsp.TextDocumentIdentifier:
    return lsp.TextDocumentIdentifier(uri=uri(daemon, rel))


@pytest.mark.asyncio
async def test_workspace_symbols_with_kind_container_and_name_position(client: LanguageClient, lsp_daemon):
    found = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="parse_config"))
    first = found[0]
    assert (first.name, first.kind) == ("parse_config", lsp.SymbolKind.Function)
    assert first.location.uri == uri(lsp_daemon, "config.py")
    assert (first.location.range.start.line, first.location.range.start.character) == (7, 4)
    stats = next(s for s in await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="Stats"))
                 if s.name == "Stats")
    assert (stats.kind, stats.container_name) == (lsp.SymbolKind.Class, "Inventory")
    assert (stats.location.range.start.line, stats.location.range.start.character) == (24, 10)
    prefix = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="compute"))
    assert prefix[0].name == "compute_backoff"
    assert await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="")) == []


@pytest.mark.asyncio
async def test_workspace_symbols_are_only_names_that_match_what_was_typed(client: LanguageClient, lsp_daemon):
    """The `symbols` method ranks definitions that words of the query only resemble too (it answers
    Inventory, Item and main for "inventory valuation"); a symbol list shows none of those."""
    resembling = lsp_daemon.call("symbols", {"query": "inventory valuation"})["symbols"]
    assert {"Inventory", "Item"} <= {s["name"] for s in resembling}
    assert await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="inventory valuation")) == []
    assert await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="ZebraNowhere")) == []
    for query, name in (("INVENTORY", "Inventory"), ("parse_conf", "parse_config"), ("Inventory.Stats", "Stats")):
        found = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query=query))
        assert name in [s.name for s in found], query
        assert all(symbol_matches(query, s.name, f"{s.container_name}.{s.name}" if s.container_name else s.name)
                   for s in found), query


@pytest.mark.parametrize("query, name, qualified_name, shown", [
    ("pcfg", "parse_config", "config.parse_config", True),  # in order, not adjacent
    ("PARSE", "parse_config", "config.parse_config", True),
    ("parse config", "parse_config", "config.parse_config", True),  # blanks typed between words
    ("gifnoc", "parse_config", "config.parse_config", False),  # out of order
    ("inventory valuation", "Inventory", "Inventory", False),
    ("Inv.Stats", "Stats", "Inventory.Stats", True),
    ("Item.Stats", "Stats", "Inventory.Stats", False),
])
def test_symbol_matches_as_an_editor_filters(query, name, qualified_name, shown):
    assert symbol_matches(query, name, qualified_name) is shown


@pytest.mark.asyncio
async def test_call_hierarchy_both_ways_with_call_sites(client: LanguageClient, lsp_daemon):
    items = await client.text_document_prepare_call_hierarchy_async(lsp.CallHierarchyPrepareParams(
        text_document=doc(lsp_daemon, "config.py"), position=lsp.Position(7, 6)))
    assert [i.name for i in items] == ["parse_config"]
    incoming = await client.call_hierarchy_incoming_calls_async(lsp.CallHierarchyIncomingCallsParams(item=items[0]))
    assert [(c.from_.name, c.from_.uri.endswith("inventory.py")) for c in incoming] == [("main", True)]
    assert [r.start.line for r in incoming[0].from_ranges] == [71]
    mains = await client.text_document_prepare_call_hierarchy_async(lsp.CallHierarchyPrepareParams(
        text_document=doc(lsp_daemon, "inventory.py"), position=lsp.Position(69, 5)))
    outgoing = await client.call_hierarchy_outgoing_calls_async(lsp.CallHierarchyOutgoingCallsParams(item=mains[0]))
    by_name = {c.to.name: [r.start.line for r in c.from_ranges] for c in outgoing}
    assert by_name["parse_config"] == [71] and by_name["compute_backoff"] == [77]
    # from a call site, not a definition: the definition it calls
    at_call = await client.text_document_prepare_call_hierarchy_async(lsp.CallHierarchyPrepareParams(
        text_document=doc(lsp_daemon, "inventory.py"), position=lsp.Position(71, 16)))
    assert at_call[0].name == "parse_config" and at_call[0].uri.endswith("config.py")


@pytest.mark.asyncio
async def test_definition_and_references(client: LanguageClient, lsp_daemon):
    found = await client.text_document_definition_async(lsp.DefinitionParams(
        text_document=doc(lsp_daemon, "inventory.py"), position=lsp.Position(71, 18)))
    assert [(loc.uri.endswith("config.py"), loc.range.start.line, loc.range.start.character) for loc in found] == [
        (True, 7, 4)]
    refs = await client.text_document_references_async(lsp.ReferenceParams(
        text_document=doc(lsp_daemon, "config.py"), position=lsp.Position(7, 6),
        context=lsp.ReferenceContext(include_declaration=False)))
    assert [(r.uri.endswith("inventory.py"), r.range.start.line, r.range.start.character) for r in refs] == [
        (True, 71, 15)]


@pytest.mark.asyncio
async def test_the_custom_search_is_the_api_search(client: LanguageClient, lsp_daemon):
    params = {"query": "parse a key value config file", "mode": "keyword", "limit": 3}
    answer = await client.protocol.send_request_async("codesearch/search", params)
    answer = answer if isinstance(answer, dict) else answer._asdict()
    expected = lsp_daemon.call("search", params)
    assert [r["id"] for r in _results(answer)] == [r["id"] for r in expected["results"]]
    via_command = await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command="codesearch.search", arguments=[params]))
    assert [r["id"] for r in _results(via_command)] == [r["id"] for r in expected["results"]]
    with pytest.raises(Exception, match="limit must be"):
        await client.protocol.send_request_async("codesearch/search", {"query": "x", "limit": 0})
    grep = await client.protocol.send_request_async("codesearch/grep", {"pattern": "parse_config"})
    grep = grep if isinstance(grep, dict) else grep._asdict()
    first = grep["matches"][0] if isinstance(grep["matches"][0], dict) else grep["matches"][0]._asdict()
    assert (first["path"], first["line"]) == ("config.py", 8)
    with pytest.raises(Exception, match="invalid regular expression"):
        await client.protocol.send_request_async("codesearch/grep", {"pattern": "(("})


def _results(answer) -> list[dict]:
    data = answer if isinstance(answer, dict) else answer._asdict()
    return [r if isinstance(r, dict) else r._asdict() for r in data["results"]]


@pytest.mark.asyncio
async def test_an_edit_after_start_is_answered_within_a_second_or_so(client: LanguageClient, lsp_daemon):
    write(lsp_daemon.root / "fresh_lsp.py", "def quetzal_harbor_lsp():\n    return 3\n")
    written = time.monotonic()
    while time.monotonic() - written < 5:
        found = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="quetzal_harbor_lsp"))
        if found:
            break
        await asyncio.sleep(0.05)
    else:
        pytest.fail("the new function never showed up")
    assert found[0].location.uri.endswith("fresh_lsp.py")


async def _definition(client: LanguageClient, daemon, rel: str, line: int, character: int) -> list[tuple[str, int]]:
    found = await client.text_document_definition_async(lsp.DefinitionParams(
        text_document=doc(daemon, rel), position=lsp.Position(line, character)))
    return sorted((loc.uri.rsplit("/", 1)[-1], loc.range.start.line) for loc in found)


@pytest.mark.asyncio
async def test_a_guess_by_name_shows_only_where_nothing_resolved_better(client: LanguageClient, lsp_daemon):
    write(lsp_daemon.root / "disk_lsp.py", "class Disk:\n    def surface(self):\n        return 1\n\n"
                                           "    def total(self):\n        return self.surface()\n")
    write(lsp_daemon.root / "tile_lsp.py", "class Tile:\n    def surface(self):\n        return 2\n")
    # the shapes are imported: a call on a receiver of unknown type is guessed among the methods the
    # caller's imports reach, never among every method of the name
    write(lsp_daemon.root / "shapes_lsp.py", "from disk_lsp import Disk\nfrom tile_lsp import Tile\n\n\n"
                                             "def both(shape):\n    tile = Tile()\n    tile.surface()\n"
                                             "    return shape.surface()\n"
                                             "\n\ndef report(shape):\n    return shape.surface()\n")
    guessed = [("disk_lsp.py", 1), ("tile_lsp.py", 1)]
    written = time.monotonic()
    while await _definition(client, lsp_daemon, "shapes_lsp.py", 11, 19) != guessed:  # shape.surface(): a guess
        if time.monotonic() - written > 10:
            pytest.fail("the new files never showed up")
        await asyncio.sleep(0.1)
    assert await _definition(client, lsp_daemon, "disk_lsp.py", 5, 22) == [("disk_lsp.py", 1)]  # self.surface()
    both = await client.text_document_prepare_call_hierarchy_async(lsp.CallHierarchyPrepareParams(
        text_document=doc(lsp_daemon, "shapes_lsp.py"), position=lsp.Position(4, 5)))
    outgoing = await client.call_hierarchy_outgoing_calls_async(lsp.CallHierarchyOutgoingCallsParams(item=both[0]))
    assert sorted(c.to.detail for c in outgoing) == ["Tile", "Tile.surface"]  # its guess at Disk.surface is not
    disk = await client.text_document_prepare_call_hierarchy_async(lsp.CallHierarchyPrepareParams(
        text_document=doc(lsp_daemon, "disk_lsp.py"), position=lsp.Position(1, 9)))
    incoming = await client.call_hierarchy_incoming_calls_async(lsp.CallHierarchyIncomingCallsParams(item=disk[0]))
    assert sorted(c.from_.name for c in incoming) == ["report", "total"]  # `both` resolved its calls to Tile's


@pytest.mark.asyncio
async def test_bad_input_gets_an_answer_never_a_hang(client: LanguageClient, lsp_daemon):
    with pytest.raises(Exception, match="file: URIs only"):
        await client.text_document_definition_async(lsp.DefinitionParams(
            text_document=lsp.TextDocumentIdentifier(uri="untitled:Untitled-1"), position=lsp.Position(0, 0)))
    with pytest.raises(Exception, match="outside the workspace"):
        await client.text_document_definition_async(lsp.DefinitionParams(
            text_document=lsp.TextDocumentIdentifier(uri="file:///etc/hostname"), position=lsp.Position(0, 0)))
    past_end = await client.text_document_definition_async(lsp.DefinitionParams(
        text_document=doc(lsp_daemon, "config.py"), position=lsp.Position(5000, 3)))
    assert not past_end
    assert await client.text_document_prepare_call_hierarchy_async(lsp.CallHierarchyPrepareParams(
        text_document=doc(lsp_daemon, "config.py"), position=lsp.Position(0, 999))) is None
    nothing = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="zzzqqqxxx_nothing"))
    assert nothing == []
    # $/cancelRequest: the request is dropped (an error reply) or was answered already; the server goes on
    pending = client.protocol.send_request(lsp.WORKSPACE_SYMBOL, lsp.WorkspaceSymbolParams(query="Inventory"),
                                           msg_id="cancel-me")
    client.protocol.notify(lsp.CANCEL_REQUEST, lsp.CancelParams(id="cancel-me"))
    try:
        answered = await asyncio.wait_for(asyncio.wrap_future(pending), 30)
        assert answered[0].name == "Inventory"
    except Exception as exc:  # the cancellation error is what a dropped request gets
        assert "cancel" in str(exc).lower()
    assert (await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="clamp")))[0].name == "clamp"


@pytest.mark.asyncio
async def test_a_daemon_that_dies_is_started_again(client: LanguageClient, lsp_daemon):
    pid = lsp_daemon.pid
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: pid_gone(pid), timeout=15, what="the daemon to die")
    found = await asyncio.wait_for(client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="clamp")), 120)
    assert found[0].name == "clamp"
    new_pid = lsp_daemon.read_pid()
    assert new_pid and new_pid != pid
    lsp_daemon.pids.add(new_pid)


# --- a repository without an index: the daemon's work as $/progress -----------------------------

@pytest.fixture
def fresh_root(request):
    from daemon_helpers import Daemon, copy_sample, new_base
    root = copy_sample(new_base() / "repo")
    request.addfinalizer(Daemon(root).cleanup)  # the daemon the server starts
    return root


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "codesearch.cli", "lsp"],
                                              server_env=ENV))
async def fresh_client(lsp_client: LanguageClient, request):
    root = request.getfixturevalue("fresh_root")
    await lsp_client.initialize_session(lsp.InitializeParams(
        capabilities=client_capabilities("neovim"), root_uri=root.as_uri(),
        workspace_folders=[lsp.WorkspaceFolder(uri=root.as_uri(), name="repo")]))
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_indexing_and_embedding_show_as_work_done_progress(fresh_client: LanguageClient, fresh_root):
    deadline = time.monotonic() + 180
    ended = []
    while time.monotonic() < deadline and not ended:
        await asyncio.sleep(0.2)
        ended = [token for token, values in fresh_client.progress_reports.items()
                 if values and isinstance(values[-1], lsp.WorkDoneProgressEnd)]
    assert ended, fresh_client.progress_reports
    values = fresh_client.progress_reports[ended[0]]
    assert isinstance(values[0], lsp.WorkDoneProgressBegin) and values[0].title == "codesearch"
    messages = [v.message for v in values if not isinstance(v, lsp.WorkDoneProgressEnd)]
    assert any(m and ("embedding" in m or "index" in m) for m in messages), messages
    found = await fresh_client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="parse_config"))
    assert found and found[0].name == "parse_config"
