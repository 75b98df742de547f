"""Which SCIP index an index takes its precise call edges from, and those edges kept in step with
it and with the files: after each run's own resolution, the files the SCIP index covers get its
edges again (all of them when the index file changed, else those of the callers the run resolved
anew), and a file edited since the index was made keeps codesearch's own resolution.

The index file is the `scip` setting (`codesearch index --scip FILE`, remembered by the catalog
for later runs and the daemon), else `index.scip` at the repository's root (scip-typescript's
and scip-python's default output) unless `scip_discover` is off. A file that cannot be read as a
SCIP index is reported in one line and left out: the index goes on with its own resolution."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..config import Settings
from ..ingest.scip import CONVENTIONAL_NAME, ScipError, ScipIndex, read_index, rebased
from ..store.catalog import Catalog
from ..store.edges import resolve_call_edges
from ..store.scip_edges import ScipCoverage, apply_scip_edges, drop_scip_edges

# catalog meta: the file given with --scip (kept for later runs), and what the last run used
GIVEN, STATE = "scip_given", "scip_state"


@dataclass(frozen=True)
class ScipState:
    """What the catalog's SCIP edges came from, for `stats` and `doctor`."""

    path: str = ""  # the SCIP index in use ("" for none)
    signature: str = ""  # its mtime and size when it was read
    files: int = 0  # files whose call edges come from it
    stale: int = 0  # files it covers that changed since it was made: codesearch's own resolution
    problem: str = ""  # why the file was not used

    def to_json(self) -> str:
        return json.dumps(self.__dict__, sort_keys=True)


def read_state(catalog: Catalog) -> ScipState:
    raw = catalog.get_meta(STATE)
    try:
        return ScipState(**json.loads(raw)) if raw else ScipState()
    except (ValueError, TypeError):
        return ScipState()


def locate(root: Path, settings: Settings, given: str | None) -> Path | None:
    """The SCIP index to use: the setting, the one given before, or the conventional one."""
    if settings.scip:
        return root / settings.scip  # an absolute setting stays as it is
    if given and Path(given).is_file():
        return Path(given)
    conventional = root / CONVENTIONAL_NAME
    return conventional if settings.scip_discover and conventional.is_file() else None


# the index last read in this process, by its file, signature and the root its paths were made
# relative to: a daemon reads it again only when the file changes
_loaded: tuple[tuple[str, str, Path], ScipIndex] | None = None


def _load(path: Path, signature: str, root: Path) -> ScipIndex:
    global _loaded
    key = (str(path), signature, root)
    if _loaded is None or _loaded[0] != key:
        _loaded = None  # the old one's memory goes before the new one is read
        _loaded = (key, rebased(read_index(path), root))
    return _loaded[1]


def update_scip_edges(catalog: Catalog, root: Path, settings: Settings, affected: list[int] | None,
                      log: Callable[[str], None]) -> ScipState:
    """After a run resolved calls by name (`affected`: the callers it resolved again; None: all
    of them), the covered files' edges from the SCIP index; its state, also kept in the catalog."""
    before = read_state(catalog)
    if settings.scip:
        catalog.set_meta(GIVEN, str((root / settings.scip).resolve()))
    path = locate(root, settings, catalog.get_meta(GIVEN))
    if path is None:
        if before.path or before.files:
            _fall_back(catalog)
            _save(catalog, ScipState())
        return ScipState()
    try:
        stat = path.stat()
        signature = f"{stat.st_mtime_ns}:{stat.st_size}"
    except OSError as exc:
        return _refuse(catalog, before, ScipState(str(path), problem=f"cannot read {path}: {exc.strerror or exc}"), log)
    changed = (str(path), signature) != (before.path, before.signature) or affected is None
    if not changed and (before.problem or not affected):
        return before
    try:
        index = _load(path, signature, root)
    except ScipError as exc:
        return _refuse(catalog, before, ScipState(str(path), signature, problem=str(exc)), log)
    with catalog.transaction() as db:
        if changed:  # the files the index no longer covers resolved by codesearch again, only those
            had_scip = drop_scip_edges(db)
            coverage = apply_scip_edges(db, index, stat.st_mtime_ns)
            if left := set(had_scip) - set(coverage.covered):
                resolve_call_edges(db, left, set())
        else:
            coverage = apply_scip_edges(db, index, stat.st_mtime_ns, affected)
        state = _state(path, signature, coverage)
        _save(catalog, state)
    if changed and not coverage.files:
        log(f"the SCIP index {path} covers none of the indexed files")
    return state


def _state(path: Path, signature: str, coverage: ScipCoverage) -> ScipState:
    return ScipState(str(path), signature, coverage.files, coverage.stale)


def _fall_back(catalog: Catalog) -> None:
    """Every file that had SCIP edges resolved by codesearch again."""
    with catalog.transaction() as db:
        paths = drop_scip_edges(db)
        if paths:
            resolve_call_edges(db, set(paths), set())


def _refuse(catalog: Catalog, before: ScipState, state: ScipState, log: Callable[[str], None]) -> ScipState:
    """A SCIP index that cannot be used: one line, and the files keep codesearch's own edges."""
    if (state.path, state.signature, state.problem) != (before.path, before.signature, before.problem):
        log(f"SCIP index not used: {state.problem}")
    if before.files:
        _fall_back(catalog)
    _save(catalog, state)
    return state


def _save(catalog: Catalog, state: ScipState) -> None:
    with catalog.transaction():
        catalog.set_meta(STATE, state.to_json())
