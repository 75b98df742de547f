"""A workspace: the repositories one answer covers, each with a name and a boost, read from a
workspace file (`[[repo]]` tables of TOML) or from a list of paths.

A problem with the file itself (bad TOML, a wrong type, an unknown key, a name given twice) is
an error that names its line; a repository that is missing on disk is not: the workspace still
answers from the others, with a note (api/workspace_service.py).
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

import tomllib

from .search.fusion import boost_problem

DEFAULT_BOOST = 1.0
REPO_KEYS = frozenset({"path", "name", "boost"})
_REPO_HEADER = re.compile(r"^\s*\[\[\s*repo\s*\]\]")
_NAME = re.compile(r"^[^\s/\\:,]+$")  # a name goes in `--boost-sources`-like lists and in notes


class WorkspaceError(ValueError):
    """A workspace that cannot be read; the message names the file and line."""


@dataclass(frozen=True)
class RepoSpec:
    name: str
    root: Path  # resolved; it may not exist (then the workspace answers without it, with a note)
    boost: float = DEFAULT_BOOST


@dataclass(frozen=True)
class Workspace:
    repos: tuple[RepoSpec, ...]
    file: Path | None = None  # the workspace file it was read from, if any

    @property
    def boosts(self) -> dict[str, float]:
        return {r.name: r.boost for r in self.repos}

    def state_dir(self) -> Path:
        """Where the daemon serving this workspace keeps its socket, pid, lock and log:
        $CODESEARCH_WORKSPACE_DIR, else ~/.cache/codesearch/workspaces, then the key. Not inside
        one of the repositories: none of them owns the workspace (and a socket path must stay
        under 108 bytes)."""
        base = os.environ.get("CODESEARCH_WORKSPACE_DIR") or Path.home() / ".cache" / "codesearch" / "workspaces"
        return Path(base).resolve() / self.key()

    def key(self) -> str:
        """Names this set of repositories (names, roots and boosts), whatever order or file they
        came from: the daemon serving it is found by this key."""
        text = "\n".join(f"{r.name}\0{r.root}\0{r.boost!r}" for r in sorted(self.repos, key=lambda r: r.name))
        return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def workspace_of_paths(paths: list[str] | list[Path]) -> Workspace:
    """`--repo A --repo B` or `daemon start A B`: each named after its folder, boost 1."""
    repos = tuple(RepoSpec(Path(p).resolve().name or str(Path(p).resolve()), Path(p).resolve()) for p in paths)
    _check_unique(repos, lambda i: f"--repo {paths[i]}", "give a workspace file with a distinct name for each")
    return Workspace(repos)


def load_workspace(file: str | Path) -> Workspace:
    """Read a workspace file; paths in it are relative to its folder."""
    path = Path(file)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        raise WorkspaceError(f"cannot read the workspace file {path}: {reason}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:  # its message names the line and column
        raise WorkspaceError(f"{path}: not valid TOML: {exc}") from None
    lines = [n for n, line in enumerate(text.splitlines(), start=1) if _REPO_HEADER.match(line)]
    unknown = sorted(set(data) - {"repo"})
    if unknown:
        raise WorkspaceError(f"{path}: unknown key {unknown[0]!r}; a workspace file holds [[repo]] tables")
    entries = data.get("repo")
    if not isinstance(entries, list) or not entries:
        raise WorkspaceError(f"{path}: no repositories; add [[repo]] tables with a path each")
    base = path.resolve().parent
    repos = tuple(_repo(entry, base, f"{path}:{lines[i] if i < len(lines) else '?'}")
                  for i, entry in enumerate(entries))
    _check_unique(repos, lambda i: f"{path}:{lines[i] if i < len(lines) else '?'}",
                  "give each [[repo]] its own name")
    return Workspace(repos, path.resolve())


def _repo(entry: object, base: Path, where: str) -> RepoSpec:
    if not isinstance(entry, dict):
        raise WorkspaceError(f"{where}: a repository is a [[repo]] table")
    unknown = sorted(set(entry) - REPO_KEYS)
    if unknown:
        raise WorkspaceError(f"{where}: unknown key {unknown[0]!r} in [[repo]]; known: boost, name, path")
    raw = entry.get("path")
    if not isinstance(raw, str) or not raw.strip():
        raise WorkspaceError(f"{where}: [[repo]] needs a path (a string)")
    root = (base / os.path.expanduser(raw)).resolve()
    name = entry.get("name", root.name)
    if not isinstance(name, str) or not _NAME.match(name) or not name.isprintable():
        raise WorkspaceError(f"{where}: name {name!r} must be a non-empty string of printable characters "
                             "without spaces, '/', ':' or ','")
    boost = entry.get("boost", DEFAULT_BOOST)
    problem = boost_problem(boost)
    if problem:
        raise WorkspaceError(f"{where}: boost {boost!r} {problem}")
    return RepoSpec(name, root, float(boost))


def _check_unique(repos: tuple[RepoSpec, ...], where, advice: str) -> None:
    seen: set[str] = set()
    for i, repo in enumerate(repos):
        if repo.name in seen:
            raise WorkspaceError(f"{where(i)}: a second repository named {repo.name!r}; {advice}")
        seen.add(repo.name)
