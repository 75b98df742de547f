"""Helpers and fixtures for tests/indexing/test_index_integration.py: the real catalog, Chroma and model.

Imported by that module (not a conftest.py, so nothing here applies to other test files).
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

import pytest
from daemon_helpers import SUITE_SETTINGS

from codesearch.store.sqlite import sqlite3

REPO_ROOT = Path(__file__).resolve().parents[2]
SAMPLES = REPO_ROOT / "sample_repos"
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
CLI_TIMEOUT = 300


# --- running the CLI --------------------------------------------------------------------------
def cli_env() -> dict[str, str]:
    """The environment of a CLI subprocess: no CODESEARCH_* settings leak in from outside."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODESEARCH_") or k in SUITE_SETTINGS}
    env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def cli_command(*args: object) -> list[str]:
    return [sys.executable, "-m", "codesearch.cli", *map(str, args)]


def run_cli(*args: object, timeout: float = CLI_TIMEOUT, cwd: Path = REPO_ROOT) -> subprocess.CompletedProcess:
    """`codesearch ARGS` in a fresh process (loads the model itself when it needs it)."""
    return subprocess.run(cli_command(*args), cwd=cwd, env=cli_env(), capture_output=True, text=True,
                          timeout=timeout)


class CliProcess:
    """A background `codesearch ARGS` in its own process group, output in files."""

    started: ClassVar[list[CliProcess]] = []

    def __init__(self, workdir: Path, *args: object):
        workdir.mkdir(parents=True, exist_ok=True)
        self.out_path = workdir / f"out-{time.monotonic_ns()}.txt"
        self.err_path = self.out_path.with_name(self.out_path.name.replace("out-", "err-"))
        self._out = open(self.out_path, "w")
        self._err = open(self.err_path, "w")
        self.proc = subprocess.Popen(cli_command(*args), cwd=REPO_ROOT, env=cli_env(), stdout=self._out,
                                     stderr=self._err, start_new_session=True)
        CliProcess.started.append(self)

    @classmethod
    def kill_leftovers(cls) -> None:
        """After a test: SIGKILL the ones it started and left running (a failed assertion)."""
        while cls.started:
            run = cls.started.pop()
            if run.running():
                run.kill9()
            else:
                run.wait(5)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def running(self) -> bool:
        return self.proc.poll() is None

    def stderr(self) -> str:
        return self.err_path.read_text()

    def stdout(self) -> str:
        return self.out_path.read_text()

    def kill9(self) -> int:
        """SIGKILL the indexer and everything it started (its extraction workers), like kill -9."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)  # the group we created with start_new_session
        return self.wait(30)

    def wait(self, timeout: float = CLI_TIMEOUT) -> int:
        try:
            return self.proc.wait(timeout)
        finally:
            self._out.close()
            self._err.close()

    def wait_for(self, condition: Callable[[], bool], timeout: float = 120, interval: float = 0.005) -> bool:
        """Poll until condition() or the process ends; True when the condition was seen."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if condition():
                return True
            if not self.running():
                return bool(condition())
            time.sleep(interval)
        raise AssertionError(f"timed out waiting for a state of the indexer; stderr: {self.stderr()[-2000:]}")


def run_main(*args: object) -> tuple[int, str, str]:
    """`codesearch ARGS` in this process (shares the already loaded model): (exit code, stdout, stderr)."""
    from codesearch import cli
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


# --- trees ------------------------------------------------------------------------------------
def copy_sample(language: str, dst: Path) -> Path:
    """A fresh copy of a sample repository, without an index someone built in it (the README's
    first command indexes sample_repos/python)."""
    shutil.copytree(SAMPLES / language, dst, symlinks=True, ignore=shutil.ignore_patterns(".codesearch"))
    return dst


def copy_tree(src: Path, dst: Path) -> Path:
    """A copy of a repository (and of an index inside it), timestamps included."""
    shutil.copytree(src, dst, symlinks=True)
    return dst


LARGE_TREE_LANGUAGES = ("python", "go", "javascript")


def build_large_tree(dst: Path, generated: int = 300, languages: tuple[str, ...] = LARGE_TREE_LANGUAGES,
                     definitions: bool = False) -> Path:
    """Several sample projects side by side plus `generated` small Python modules that import
    each other in a ring (one chunk each, so embedding stays cheap); with `definitions`, each
    also defines a function that calls the next module's (call edges across write batches)."""
    dst.mkdir(parents=True)
    for language in languages:
        copy_sample(language, dst / language)
    for i in range(generated):
        j = (i + 1) % generated
        package = dst / "gen" / f"pkg{i // 50}"
        package.mkdir(parents=True, exist_ok=True)
        if definitions:
            text = (f"from gen.pkg{j // 50}.mod_{j:03d} import helper_{j}\n\n\n"
                    f"def helper_{i}(value):\n    return helper_{j}(value) * {i}\n")
        else:
            text = f"import gen.pkg{j // 50}.mod_{j:03d}\n"
        (package / f"mod_{i:03d}.py").write_text(text, encoding="utf-8")
    return dst


# --- looking at an index ----------------------------------------------------------------------
def read_catalog(catalog_path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{catalog_path}?mode=ro", uri=True, timeout=30)


def query_catalog(catalog_path: Path, sql: str, params: tuple = ()) -> list[tuple]:
    db = read_catalog(catalog_path)
    try:
        return db.execute(sql, params).fetchall()
    finally:
        db.close()


def try_count(catalog_path: Path, sql: str) -> int:
    """A count from a catalog that another process may be creating right now (0 when unreadable)."""
    if not catalog_path.exists():
        return 0
    try:
        return int(query_catalog(catalog_path, sql)[0][0] or 0)
    except sqlite3.Error:
        return 0


# the catalog's rows as tests look at them: by chunk id and path (the tables hold row numbers)
CHUNK_ROWS = ("SELECT c.id AS id, c.kind AS kind, c.name AS name, COALESCE(c.qualified_name, c.name) AS "
              "qualified_name, f.path AS path FROM chunks c JOIN files f ON f.fid = c.fid")
CALL_ROWS = ("SELECT c.id AS caller_id, f.path AS path, n.name AS name, k.line AS line FROM calls k "
             "JOIN names n ON n.nid = k.nid JOIN chunks c ON c.rid = k.caller JOIN files f ON f.fid = c.fid")
EDGE_ROWS = ("SELECT a.id AS src, b.id AS dst, CASE e.kind WHEN 0 THEN 'calls' ELSE 'imports' END AS kind "
             "FROM edges e JOIN chunks a ON a.rid = e.src JOIN chunks b ON b.rid = e.dst "
             "UNION ALL SELECT p.id, c.id, 'contains' FROM chunks c JOIN chunks p ON p.rid = c.parent")
IMPORT_ROWS = "SELECT f.path AS path, i.module AS module, i.line AS line FROM imports i JOIN files f ON f.fid = i.fid"


def snapshot(catalog_path: Path) -> dict:
    """What must be equal between two indexes of the same tree."""
    from codesearch.store.catalog import Catalog
    catalog = Catalog(catalog_path, readonly=True)
    try:
        return catalog.stats.contents()
    finally:
        catalog.close()


def catalog_chunk_ids(catalog_path: Path) -> set[str]:
    return {r[0] for r in query_catalog(catalog_path, "SELECT id FROM chunks")}


def open_index(root: Path, index_dir: Path | None = None, create: bool = False):
    from codesearch.config import load_settings
    from codesearch.indexing.index import Index
    return Index(root, load_settings(root), index_dir, create=create)


def chroma_ids(root: Path, index_dir: Path | None = None) -> set[str]:
    index = open_index(root, index_dir)
    try:
        return index.vectors.store.ids()
    finally:
        index.close()


def assert_vectors_mirror_catalog(repo: Path, index_dir: Path | None = None) -> None:
    """Chroma holds a vector for exactly the chunks that get one (all but those with nothing to
    say: embed_min_chars), each the one the catalog records."""
    catalog = (index_dir or repo / ".codesearch") / "catalog.sqlite3"
    ids = {r[0] for r in query_catalog(catalog, "SELECT id FROM chunks WHERE embed_hash IS NOT NULL")}
    assert ids, "the index has no chunks"
    assert chroma_ids(repo, index_dir) == ids
    marked = query_catalog(catalog, "SELECT COUNT(*) FROM chunks WHERE vector_hash = embed_hash")[0][0]
    assert marked == len(ids)
    assert query_catalog(catalog, "SELECT COUNT(*) FROM vector_deletions")[0][0] == 0



def run_indexer(root: Path, index_dir: Path | None = None, embed: bool = True):
    """Indexer.run in this process (the model, when needed, is the module's shared one)."""
    from codesearch.indexing.indexer import Indexer
    index = open_index(root, index_dir, create=True)
    try:
        return Indexer(index).run(embed=embed)
    finally:
        index.close()


# --- the model, loaded once per test module ---------------------------------------------------
@contextlib.contextmanager
def shared_embedders():
    """Every Index opened in this process gets the same embedder for the same settings, so
    the real model loads once for all in-process runs, not once per Index."""
    import codesearch.embedding.backends as backends
    real = backends.create_embedder
    loaded: dict = {}

    def embedder(settings):
        made = real(settings)  # cheap: the model loads on first use
        return loaded.setdefault((made.key, settings.device, settings.embed_batch_size), made)

    patch = pytest.MonkeyPatch()
    patch.setattr(backends, "create_embedder", embedder)
    for key in list(os.environ):
        if key.startswith("CODESEARCH_") and key not in SUITE_SETTINGS:
            patch.delenv(key)
    try:
        yield loaded
    finally:
        patch.undo()


# --- a Chroma server --------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_http(url: str, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"the Chroma server exited with code {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=1) as answer:
                if answer.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"the Chroma server did not answer at {url} within {timeout}s")
