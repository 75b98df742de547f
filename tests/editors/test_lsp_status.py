"""What `codesearch lsp` shows of a daemon whose model is still loading, driven by pytest-lsp's
client: progress while it loads, that ends once it has; a partial answer's message carries the
daemon's share and why (not "0% done"), and a later message corrects it without a new search.
The daemon is real, over an index `codesearch index` embedded whole; its model loads when the
test opens the gate (gated_daemon.py)."""

from __future__ import annotations

import asyncio
import os
import sys
import time

import pytest
import pytest_lsp
from daemon_helpers import REPO_ROOT, SUITE_SETTINGS, seed_repo, seeded_tree  # noqa: F401 - fixtures
from gated_daemon import GatedDaemon
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from codesearch.daemon.embedder import MODEL_WAIT_SECONDS
from codesearch.transports.lsp_progress import progress_of

ENV = {**{k: v for k, v in os.environ.items() if not k.startswith("CODESEARCH_") or k in SUITE_SETTINGS},
       "PYTHONPATH": str(REPO_ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


@pytest.fixture
def held(seeded_tree):
    daemon = GatedDaemon(seeded_tree)
    try:
        yield daemon.start().serve()
    finally:
        daemon.close()


@pytest_lsp.fixture(config=ClientServerConfig(
    server_command=[sys.executable, "-m", "codesearch.cli", "lsp", "--no-start"], server_env=ENV))
async def client(lsp_client: LanguageClient, request):
    root = request.getfixturevalue("held").daemon.root
    await lsp_client.initialize_session(lsp.InitializeParams(
        capabilities=client_capabilities("neovim"), root_uri=root.as_uri(),
        workspace_folders=[lsp.WorkspaceFolder(uri=root.as_uri(), name="repo")]))
    yield
    await lsp_client.shutdown_session()


async def until(predicate, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.1)


def loading(client: LanguageClient) -> list | None:
    """The progress reports of the model's loading, or None while it has not begun."""
    return next((values for values in client.progress_reports.values()
                 if values and isinstance(values[0], lsp.WorkDoneProgressBegin)
                 and values[0].message == "loading the embedding model"), None)


def messages(client: LanguageClient) -> list[str]:
    return [m.message for m in client.messages if m.message.startswith("codesearch:")]


@pytest.mark.asyncio
async def test_a_partial_answer_is_told_with_the_daemons_share_and_corrected_once_the_model_loads(
        client: LanguageClient, held):
    await until(lambda: loading(client), 30, "the loading progress")
    answer = await client.protocol.send_request_async("codesearch/search", {"query": "retry delay with backoff"})
    assert answer.partial is True and answer.embedded_share == 1.0
    await until(lambda: messages(client), 10, "the partial answer's message")
    told = messages(client)[0]
    assert f"did not get ready within {MODEL_WAIT_SECONDS:g} s" in told and "100% of chunks have vectors" in told, told
    assert "0% done" not in told

    held.gate.set()  # the model loads now; no new search is asked
    await until(lambda: len(messages(client)) > 1, 30, "the correction")
    assert "vectors ready (100% of chunks)" in messages(client)[1], messages(client)
    await until(lambda: isinstance(loading(client)[-1], lsp.WorkDoneProgressEnd), 30, "the progress to end")

    answer = await client.protocol.send_request_async("codesearch/search", {"query": "retry delay with backoff"})
    assert not getattr(answer, "partial", None)


EMBEDDED = {"ready": True, "model_ready": True, "vectors": 30, "embedding": {"chunks_without_vectors": 0},
            "embedded_share": 1.0}
CASES = {
    "the model loads over an index embedded whole": ({**EMBEDDED, "model_ready": False},
                                                     ("loading the embedding model", None)),
    "embedding, with an ETA": ({**EMBEDDED, "embedding": {"chunks_without_vectors": 20, "eta_seconds": 75.2},
                                "embedded_share": 0.6}, ("embedding: 20 chunks left, about 1 min 15 s to go", 60)),
    "dormant: nothing under way": ({**EMBEDDED, "model_ready": False, "dormant": True}, None),
    "nothing gets a vector: no model to wait for": ({**EMBEDDED, "model_ready": False, "vectors": 0}, None),
}


@pytest.mark.parametrize("status, shown", list(CASES.values()), ids=list(CASES))
def test_progress_of_a_status(status, shown):
    assert progress_of(status) == shown
