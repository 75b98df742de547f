"""Red-team reproductions of the daemon's writer (a failed write kept, one writer per index), on real daemons, real
SQLite and real files:

- a write batch that fails for a passing reason (the catalog's write lock held by another
  process past SQLite's busy timeout; a full disk) is kept and tried again until its files
  land, and meanwhile `status` and `health` say so (pending, stale, the reason in one line);
- a full disk (a small tmpfs under the index) leaves an index that answers, commits nothing
  half way, keeps its vectors, and catches up once space is back;
- `index --rebuild` beside a running daemon is refused (it replaced the files under the daemon,
  whose later saves then never reached the index on disk);
- six first queries at once start one daemon, and `daemon stop` leaves none.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from daemon_helpers import (
    REPO_ROOT,
    SAMPLE,
    _env,
    _seed,
    cli,
    cmdline,
    new_base,
    pid_alive,
    seeded_copy,
    start_daemon,
    uniq,
    wait_for,
    write,
)

from codesearch.store.catalog import BUSY_TIMEOUT_SECONDS, Catalog
from codesearch.store.sqlite import sqlite3

TMPFS_BYTES = 20 << 20  # room for the sample's index, which the test then fills up
CATCH_UP_SECONDS = 120.0  # a retry may be up to a minute away (RETRY_MOST_SECONDS), then embedding


@pytest.fixture(scope="module")
def seed() -> Path:
    return _seed()


def new_function(name: str) -> str:
    return f"def {name}(items):\n    \"\"\"Counts the {name} items.\"\"\"\n    return len(items)\n"


def keyword_paths(daemon, word: str) -> set[str]:
    return daemon.paths(word, mode="keyword")


def on_disk_paths(root: Path, word: str, index_dir: Path | None = None) -> set[str]:
    """What the index on disk answers, read by a process of its own (not the daemon)."""
    extra = ("--index-dir", str(index_dir)) if index_dir else ()
    done = cli("query", word, "--repo", str(root), "--mode", "keyword", "--json", "--no-daemon", *extra)
    assert done.returncode == 0, done.stderr
    import json
    return {r["path"] for r in json.loads(done.stdout)["results"]}


def waiting_with_reason(daemon, *words: str):
    """The daemon's status while a failed batch waits: pending, stale, and the reason; health too."""
    def check():
        status = daemon.status()
        reason = status.get("write_error") or ""
        if status["pending_changes"] > 0 and status["stale"] and all(w in reason for w in words):
            return status
        return None
    status = wait_for(check, timeout=BUSY_TIMEOUT_SECONDS + 30, what=f"status to report {words}")
    health = daemon.call("health")
    assert health["pending_changes"] > 0 and health["stale"] is True, health
    assert all(w in health["write_error"] for w in words), health
    assert "\n" not in status["write_error"]
    formatted = cli("daemon", "status", str(daemon.root))
    assert "not indexed yet:" in formatted.stdout and words[0] in formatted.stdout, formatted.stdout
    return status


def caught_up(daemon) -> dict:
    def check():
        status = daemon.status()
        done = not status["pending_changes"] and not status["stale"] and "write_error" not in status
        return status if done else None
    return wait_for(check, timeout=CATCH_UP_SECONDS, what="the daemon to catch up")


# --------------------------------------------------------------------------------------------
# a passing failure: the catalog's write lock held by another process past the busy timeout
# --------------------------------------------------------------------------------------------

HOLD_SECONDS = BUSY_TIMEOUT_SECONDS + 10


def hold_write_lock(catalog: Path, seconds: float) -> subprocess.Popen:
    """Another process that takes the catalog's write lock (BEGIN IMMEDIATE) and sits on it."""
    code = ("import sqlite3, sys, time\n"
            "db = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
            "db.execute('BEGIN IMMEDIATE')\n"
            "print('held', flush=True)\n"
            "time.sleep(float(sys.argv[2]))\n"
            "db.execute('ROLLBACK')\n")
    holder = subprocess.Popen([sys.executable, "-c", code, str(catalog), str(seconds)], stdout=subprocess.PIPE,
                              text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


def test_a_batch_that_fails_on_a_held_lock_is_retried_until_its_files_land(request, seed):
    daemon = start_daemon(request, seeded_copy(request, seed))
    name = uniq("zqlocked")
    holder = hold_write_lock(daemon.dir / "catalog.sqlite3", HOLD_SECONDS)
    request.addfinalizer(holder.kill)
    write(daemon.root / "locked_module.py", new_function(name))
    status = waiting_with_reason(daemon, "locked")
    assert status["pending_changes"] >= 1
    assert keyword_paths(daemon, name) == set()  # not written while the lock is held
    holder.wait(timeout=HOLD_SECONDS + 30)
    wait_for(lambda: keyword_paths(daemon, name) == {"locked_module.py"}, timeout=CATCH_UP_SECONDS,
             what="the kept batch to land once the lock is free")
    caught_up(daemon)
    assert on_disk_paths(daemon.root, name) == {"locked_module.py"}


def test_a_first_reconcile_that_fails_on_a_held_lock_is_retried(request, seed):
    """A file saved while no daemon ran reaches the index even when the daemon's first reconcile
    fails (it was logged and dropped: the file waited for its next save)."""
    root = seeded_copy(request, seed)
    name = uniq("zqbefore")
    write(root / "saved_before.py", new_function(name))
    holder = hold_write_lock(root / ".codesearch" / "catalog.sqlite3", HOLD_SECONDS)
    request.addfinalizer(holder.kill)
    daemon = start_daemon(request, root)  # ready once its reconcile has failed
    waiting_with_reason(daemon, "locked")
    holder.wait(timeout=HOLD_SECONDS + 30)
    wait_for(lambda: keyword_paths(daemon, name) == {"saved_before.py"}, timeout=CATCH_UP_SECONDS,
             what="the reconcile to be tried again")
    caught_up(daemon)


# --------------------------------------------------------------------------------------------
# a full disk under the index
# --------------------------------------------------------------------------------------------

def mount_tmpfs(request, folder: Path, size: int = TMPFS_BYTES) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip()}); the injected cases cover a full disk")
    request.addfinalizer(lambda: subprocess.run(["umount", "-l", str(folder)], capture_output=True))


def fill(folder: Path) -> Path:
    """Write a file until the disk of `folder` has no byte left."""
    filler = folder / "filler"
    with open(filler, "wb", buffering=0) as out:
        for size in (1 << 20, 1 << 12):
            try:
                while True:
                    out.write(b"\0" * size)
            except OSError:
                pass
    return filler


def seeded_on_tmpfs(request, seed: Path) -> Path:
    """A copy of the seed whose index folder is a small tmpfs of its own."""
    base = new_base()
    request.addfinalizer(lambda: shutil.rmtree(base, ignore_errors=True))
    repo = Path(shutil.copytree(seed, base / "repo", ignore=shutil.ignore_patterns(".codesearch")))
    mount_tmpfs(request, repo / ".codesearch")
    for item in (seed / ".codesearch").iterdir():
        if item.name.startswith(("daemon.", "write.lock")):
            continue
        copy = shutil.copytree if item.is_dir() else shutil.copy2
        copy(item, repo / ".codesearch" / item.name)
    return repo


def catalog_contents(catalog: Path) -> dict:
    opened = Catalog(catalog, readonly=True)
    try:
        return opened.stats.contents()
    finally:
        opened.close()


def test_a_full_disk_keeps_the_index_answering_and_it_catches_up_once_space_is_back(request, seed, tmp_path):
    repo = seeded_on_tmpfs(request, seed)
    daemon = start_daemon(request, repo)
    daemon.search("warm up the model", mode="hybrid", timeout=300)
    before = wait_for(lambda: (s := daemon.status())["embedding"]["chunks_without_vectors"] == 0 and s,
                      timeout=60, what="the seed's vectors")
    name, edited = uniq("zqfull"), uniq("zqedited")
    filler = fill(daemon.dir)
    write(repo / "full_module.py", new_function(name))
    with open(repo / "inventory.py", "a", encoding="utf-8") as out:
        out.write("\n\n" + new_function(edited))

    status = waiting_with_reason(daemon, "is full", str(daemon.dir))
    assert status["vectors"] == before["vectors"]  # the old vectors are kept
    answer = daemon.search("inventory item", mode="hybrid")  # answers from what is there
    assert "inventory.py" in {r["path"] for r in answer["results"]}
    assert keyword_paths(daemon, name) == set() and keyword_paths(daemon, edited) == set()  # nothing half way

    filler.unlink()
    wait_for(lambda: keyword_paths(daemon, name) == {"full_module.py"} and keyword_paths(daemon, edited),
             timeout=CATCH_UP_SECONDS, what="the kept batch to land once space is back")
    caught_up(daemon)
    wait_for(lambda: daemon.status()["embedding"]["chunks_without_vectors"] == 0, timeout=CATCH_UP_SECONDS,
             what="the new chunks' vectors")
    assert daemon.stop().returncode == 0
    clean = Path(shutil.copytree(repo, tmp_path / "clean", ignore=shutil.ignore_patterns(".codesearch")))
    assert cli("index", str(clean), "-q").returncode == 0
    assert catalog_contents(repo / ".codesearch" / "catalog.sqlite3") == \
        catalog_contents(clean / ".codesearch" / "catalog.sqlite3")
    verify = cli("index", str(repo), "--verify", "-q")
    assert verify.returncode == 0, verify.stderr


def test_a_daemon_that_cannot_start_on_a_full_disk_says_why(request, tmp_path):
    repo = Path(shutil.copytree(SAMPLE, tmp_path / "repo", ignore=shutil.ignore_patterns(".codesearch")))
    mount_tmpfs(request, repo / ".codesearch", size=1 << 20)
    assert cli("index", str(repo), "-q", "--no-vectors").returncode == 0
    fill(repo / ".codesearch")
    (repo / ".codesearch" / "daemon.log").unlink(missing_ok=True)
    done = cli("daemon", "start", str(repo), "--timeout", "60")
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "is full" in lines[0] and str(repo / ".codesearch") in lines[0], done.stderr


# --------------------------------------------------------------------------------------------
# a full disk, injected where the writes happen (no mount needed)
# --------------------------------------------------------------------------------------------

@pytest.fixture
def indexed_sample(tmp_path):
    from codesearch.config import load_settings
    from codesearch.indexing.index import Index
    from codesearch.indexing.indexer import Indexer
    root = Path(shutil.copytree(SAMPLE, tmp_path / "repo", ignore=shutil.ignore_patterns(".codesearch")))
    index = Index(root, load_settings(root), create=True)
    Indexer(index).run()
    yield index
    index.close()


def disk_full(*_args, **_kwargs):
    raise sqlite3.OperationalError("database or disk is full")


def test_a_batch_failing_on_a_full_disk_commits_none_of_its_files(indexed_sample, monkeypatch):
    from codesearch.indexing import indexer as indexing
    from codesearch.store.space import OutOfSpace
    root, index = indexed_sample.root, indexed_sample
    before = catalog_contents(index.catalog_path)
    write(root / "one.py", new_function("zqonefull"))
    (root / "config.py").unlink()
    monkeypatch.setattr(indexing, "resolve_call_edges", disk_full)  # after the files' own rows are written
    with pytest.raises(OutOfSpace, match="is full"):
        indexing.Indexer(index).run(["one.py", "config.py"], embed=False)
    assert catalog_contents(index.catalog_path) == before


def test_vectors_failing_on_a_full_disk_keep_the_store(indexed_sample, monkeypatch):
    from codesearch.indexing import indexer as indexing
    from codesearch.indexing.vectors import DAMAGED_NOTE
    from codesearch.store.chroma import VectorStore, VectorStoreError
    from codesearch.store.space import OutOfSpace
    root, index = indexed_sample.root, indexed_sample
    held = index.vectors.store.count()
    write(root / "inventory.py", (root / "inventory.py").read_text() + "\n\n" + new_function("zqvecfull"))

    def chroma_full(*_args, **_kwargs):
        raise VectorStoreError("the vector store failed to store vectors: InternalError: error returned from "
                               "database: (code: 13) database or disk is full")
    monkeypatch.setattr(VectorStore, "upsert", chroma_full)
    with pytest.raises(OutOfSpace, match="is full"):
        indexing.Indexer(index).run(["inventory.py"])
    assert index.vectors.problem is None and not (index.dir / DAMAGED_NOTE).exists()
    assert index.vectors.store.count() == held  # nothing deleted before the new vectors are stored
    monkeypatch.undo()
    indexing.Indexer(index).run()
    assert not index.catalog.vectors.needed()


def test_index_on_a_full_disk_is_one_line_naming_the_disk(tmp_path):
    repo = Path(shutil.copytree(SAMPLE, tmp_path / "repo", ignore=shutil.ignore_patterns(".codesearch")))
    assert cli("index", str(repo), "-q").returncode == 0
    write(repo / "more.py", new_function("zqmore"))
    code = ("import sys, runpy\n"
            "from codesearch.store import chroma as vectors\n"
            "def full(*a, **k):\n"
            "    raise vectors.VectorStoreError('the vector store failed to store vectors: database or disk is full')\n"
            "vectors.VectorStore.upsert = full\n"
            "sys.argv = ['codesearch', 'index', sys.argv[1]]\n"
            "runpy.run_module('codesearch.cli', run_name='__main__')\n")
    done = subprocess.run([sys.executable, "-c", code, str(repo)], cwd=REPO_ROOT, env=_env(), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "is full" in lines[0] and "unexpected error" not in lines[0], done.stderr
    answer = cli("query", "zqmore", "--repo", str(repo), "--no-daemon", "--mode", "keyword")
    assert answer.returncode == 0 and "more.py" in answer.stdout, answer.stderr


# --------------------------------------------------------------------------------------------
# one writer per index
# --------------------------------------------------------------------------------------------

def test_index_rebuild_beside_a_daemon_is_refused_and_saves_still_reach_the_index(request, seed):
    daemon = start_daemon(request, seeded_copy(request, seed))
    for extra in (("--no-daemon",), ()):
        done = cli("index", str(daemon.root), "--rebuild", *extra)
        assert done.returncode == 1, done.stdout + done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and f"pid {daemon.pid}" in lines[0] and "daemon stop" in lines[0], done.stderr
    done = cli("index", str(daemon.root), "--no-daemon")
    assert done.returncode == 1 and f"pid {daemon.pid}" in done.stderr, done.stderr
    name = uniq("zqafter")
    write(daemon.root / "after_rebuild.py", new_function(name))
    wait_for(lambda: keyword_paths(daemon, name) == {"after_rebuild.py"}, what="the save in the daemon")
    assert on_disk_paths(daemon.root, name) == {"after_rebuild.py"}  # in the index on disk, not a deleted file


def parent_of(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return int(fh.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def daemons_of(root: Path) -> set[int]:
    """Every live daemon process whose command line names `root`. A process whose parent has the
    same command line is not one: it is the daemon's own child between fork and exec (the
    embedding process and multiprocessing's resource tracker, started by `spawn`, show the
    daemon's command line for a few milliseconds; under load the check counted them as daemons)."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            line = cmdline(int(entry))
            if "codesearch.transports.daemon_process" in line and str(root) in line.split() and pid_alive(int(entry)):
                found[int(entry)] = line
    return {pid for pid, line in found.items() if found.get(parent_of(pid) or 0) != line}


def seen_daemon(pid: int) -> str:
    """What was seen of a counted daemon, for a failure's message."""
    return f"pid {pid} (parent {parent_of(pid)}): {cmdline(pid) or 'gone'}"


def test_six_first_queries_at_once_start_one_daemon_and_stop_leaves_none(request, tmp_path):
    repo = Path(shutil.copytree(SAMPLE, tmp_path / "repo", ignore=shutil.ignore_patterns(".codesearch"))).resolve()
    env = {**_env(), "CODESEARCH_AUTO_DAEMON": "1"}
    seen: set[int] = set()

    def kill_what_is_left() -> None:
        cli("daemon", "stop", str(repo), timeout=60)
        for pid in daemons_of(repo) | seen:
            if pid_alive(pid) and str(repo) in cmdline(pid):
                os.kill(pid, 9)
    request.addfinalizer(kill_what_is_left)
    queries = [subprocess.Popen([sys.executable, "-m", "codesearch.cli", "query", "inventory", "--repo", str(repo),
                                 "--json"], cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
               for _ in range(6)]
    most = 0
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and any(q.poll() is None for q in queries):
        now = daemons_of(repo)
        seen |= now
        most = max(most, len(now))
        time.sleep(0.02)
    settle = time.monotonic() + 5  # a daemon started last would show up now
    while time.monotonic() < settle:
        now = daemons_of(repo)
        seen |= now
        most = max(most, len(now))
        time.sleep(0.02)
    assert [q.wait() for q in queries] == [0] * 6, [q.stderr.read() for q in queries if q.stderr]
    log = repo / ".codesearch" / "daemon.log"
    assert most == 1 and len(seen) == 1, (f"{len(seen)} daemons started, {most} at once: "
                                          + "; ".join(seen_daemon(pid) for pid in sorted(seen))
                                          + "\ndaemon.log:\n" + (log.read_text() if log.exists() else "(none)"))
    done = cli("daemon", "stop", str(repo))
    assert done.returncode == 0 and "stopped" in done.stdout, done.stdout + done.stderr
    # its lock went with its process (held until exit): once stop returns, no daemon is left at all
    assert not daemons_of(repo), [seen_daemon(pid) for pid in daemons_of(repo)]


def test_a_search_on_a_full_disk_says_so_and_keeps_the_store(indexed_sample, monkeypatch):
    """The vector store failing a read for want of space is no damage: the answer comes from
    keyword and graph, says the disk is full, and does not send the user to rebuild."""
    from codesearch.api.local import LocalService
    from codesearch.api.methods import call
    from codesearch.indexing.vectors import DAMAGED_NOTE
    from codesearch.store.chroma import VectorStore, VectorStoreError
    index = indexed_sample

    def chroma_full(*_args, **_kwargs):
        raise VectorStoreError("the vector store failed a query: database or disk is full")
    monkeypatch.setattr(VectorStore, "query", chroma_full)
    answer = call(LocalService(index), "search", {"query": "compute the retry backoff", "limit": 5})
    assert answer["results"]
    said = json.dumps(answer)
    assert "until space is freed" in said and "rebuil" not in said
    assert index.vectors.problem is None and not (index.dir / DAMAGED_NOTE).exists()


def test_a_daemon_that_cannot_open_a_locked_catalog_leaves_it_in_place(tmp_path, monkeypatch):
    """Only damage rebuilds the catalog at start: a catalog locked by another writer past the busy
    timeout (or on a full disk) was removed and built again from under that writer."""
    from codesearch.config import load_settings
    from codesearch.daemon import core
    from codesearch.store.catalog import CatalogError
    repo = Path(shutil.copytree(SAMPLE, tmp_path / "repo", ignore=shutil.ignore_patterns(".codesearch")))
    assert cli("index", str(repo), "-q", "--no-vectors").returncode == 0
    catalog = repo / ".codesearch" / "catalog.sqlite3"
    before = catalog.stat().st_ino

    def locked(*_args, **_kwargs):
        raise CatalogError(f"the index database {catalog} cannot be opened (database is locked)")
    monkeypatch.setattr(core, "Index", locked)
    with pytest.raises(CatalogError, match="locked"):
        core.Daemon(repo, load_settings(repo))
    assert catalog.stat().st_ino == before
