"""Shared helpers for the codesearch tests."""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from daemon_helpers import SUITE_SETTINGS

from codesearch.config import Settings
from codesearch.ingest.extract import Extracted, extract
from codesearch.ingest.languages import language_for_path

REPO_ROOT = Path(__file__).resolve().parents[1]
# no daemon starts on its own in the suite (tests that want one set CODESEARCH_AUTO_DAEMON=1), and
# the daemons tests start register in a folder of their own (removed with the process)
os.environ["CODESEARCH_AUTO_DAEMON"] = "0"
os.environ["CODESEARCH_RUNTIME_DIR"] = tempfile.mkdtemp(prefix="codesearch-runtime-")
atexit.register(shutil.rmtree, os.environ["CODESEARCH_RUNTIME_DIR"], True)
SAMPLES = REPO_ROOT / "sample_repos"


def extract_text(rel: str, text: str | bytes, settings: Settings | None = None,
                 language: str | None = None) -> Extracted:
    """Run the real extraction pipeline on in-memory content."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    return extract(rel, data, language or language_for_path(rel) or "text", settings or Settings())


@cache
def extract_sample(language_dir: str, rel: str) -> Extracted:
    """Extract sample_repos/<language_dir>/<rel> with default settings (cached: read-only use)."""
    data = (SAMPLES / language_dir / rel).read_bytes()
    return extract_text(rel, data)


def qualified(parsed, index: int | None) -> str | None:
    return None if index is None else parsed.definitions[index].qualified_name


def run_cli(*args: str, cwd: Path = REPO_ROOT) -> subprocess.CompletedProcess:
    """Run `python -m codesearch.cli ARGS` in a clean environment."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODESEARCH_") or k in SUITE_SETTINGS}
    env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "codesearch.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60)


@pytest.fixture
def settings() -> Settings:
    return Settings()


def keyword_indexed_sample(parent: Path, sample: str):
    """A copy of sample_repos/SAMPLE under `parent`, indexed for keyword and graph search (no
    model): the open Index, for a module-scoped fixture to yield from and close."""
    from codesearch.config import load_settings
    from codesearch.indexing.index import Index
    from codesearch.indexing.indexer import Indexer
    root = parent / "repo"
    shutil.copytree(SAMPLES / sample, root, ignore=shutil.ignore_patterns(".codesearch"))
    index = Index(root, load_settings(root), create=True)
    Indexer(index).run(embed=False)
    return index


def keyword_indexed_files(root: Path, files: dict[str, str]):
    """FILES (path -> text) written under `root`, indexed for keyword and graph search (no model):
    the open Index, for a module-scoped fixture to yield from and close."""
    from codesearch.config import load_settings
    from codesearch.indexing.index import Index
    from codesearch.indexing.indexer import Indexer
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    index = Index(root, load_settings(root), create=True)
    Indexer(index).run(embed=False)
    return index


def direct_relations(index, name: str, direction: str) -> list[tuple[Any, str]]:
    """(chunk, resolution) of each direct caller or callee (`direction`) of the definitions named
    `name`: what the call-resolution tests compare with what a type-aware tool would say."""
    from codesearch.search.relations import definitions_named, neighbours
    from codesearch.store.call_graph import CallGraph
    found = [r for r in neighbours(CallGraph(index.catalog), definitions_named(index.catalog, name), direction)
             if r.depth == 1]
    chunks = index.catalog.files.chunks_by_ids([r.id for r in found])
    return [(chunks[r.id], r.resolution) for r in found]


def related_by_name(index, name: str, direction: str) -> dict[str, str]:
    """Qualified name -> resolution of the direct callers or callees of the definitions named `name`."""
    return {chunk.qualified_name: how for chunk, how in direct_relations(index, name, direction)}


def site_references(index, name: str) -> list[tuple[bool, str | None]]:
    """(is a reference, resolution) of each call site of `name`, sorted."""
    return sorted((s.reference, s.resolution) for s in index.catalog.graph.call_sites(name, 100))


def optional_tool(name: str) -> str:
    """An optional tool's executable for the tests that regenerate a fixture with it: the
    environment variable NAME in capitals (SCIP_TYPESCRIPT), else `name` on PATH, else ""
    (those tests are skipped)."""
    return os.environ.get(name.upper().replace("-", "_")) or shutil.which(name) or ""
