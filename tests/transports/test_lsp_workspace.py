"""`codesearch lsp` with several workspace folders: one workspace daemon (started by the server)
answers for all of them, and every location points into the folder its result came from."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import pytest_lsp
from daemon_helpers import REPO_ROOT
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

BASE = Path(tempfile.mkdtemp(prefix="csl-"))
SERVICE, CLIENT = BASE / "service", BASE / "client"
ENV = {**{k: v for k, v in os.environ.items() if not k.startswith("CODESEARCH_")},
       "PYTHONPATH": str(REPO_ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
       "CODESEARCH_WORKSPACE_DIR": str(BASE / "ws")}
CLIENT_CODE = "from inventory import compute_backoff\n\n\ndef fetch_with_retry(url):\n    return compute_backoff(3)\n"


@pytest.fixture(scope="module", autouse=True)
def folders():
    shutil.copytree(REPO_ROOT / "sample_repos" / "python", SERVICE, ignore=shutil.ignore_patterns(".codesearch"))
    CLIENT.mkdir()
    (CLIENT / "app.py").write_text(CLIENT_CODE)
    yield
    subprocess.run([sys.executable, "-m", "codesearch.cli", "daemon", "stop", str(SERVICE), str(CLIENT)],
                   env=ENV, capture_output=True, timeout=60)
    shutil.rmtree(BASE, ignore_errors=True)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "codesearch.cli", "lsp"],
                                              server_env=ENV))
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(lsp.InitializeParams(
        capabilities=client_capabilities("neovim"), root_uri=SERVICE.as_uri(),
        workspace_folders=[lsp.WorkspaceFolder(uri=SERVICE.as_uri(), name="service"),
                           lsp.WorkspaceFolder(uri=CLIENT.as_uri(), name="client")]))
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_symbols_and_calls_across_the_workspace_folders(client: LanguageClient):
    found = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="fetch_with_retry"))
    assert found[0].location.uri == (CLIENT / "app.py").as_uri()
    found = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="compute_backoff"))
    assert found[0].location.uri == (SERVICE / "inventory.py").as_uri()
    items = await client.text_document_prepare_call_hierarchy_async(lsp.CallHierarchyPrepareParams(
        text_document=lsp.TextDocumentIdentifier(uri=(SERVICE / "inventory.py").as_uri()),
        position=lsp.Position(63, 6)))
    assert [i.name for i in items] == ["compute_backoff"]
    incoming = await client.call_hierarchy_incoming_calls_async(lsp.CallHierarchyIncomingCallsParams(item=items[0]))
    callers = {(c.from_.name, c.from_.uri) for c in incoming}
    assert ("fetch_with_retry", (CLIENT / "app.py").as_uri()) in callers
    assert ("main", (SERVICE / "inventory.py").as_uri()) in callers
    answer = await client.protocol.send_request_async("codesearch/search", {"query": "fetch_with_retry",
                                                                           "mode": "keyword", "limit": 3})
    # pygls hands JSON objects over as named tuples
    assert ("client", "fetch_with_retry", "app.py") in {(r.repo, r.name, r.path) for r in answer.results}
