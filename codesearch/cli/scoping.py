"""What a command's arguments say about where to look: the filters (--lang, --kind, --path),
each repository's root, and a note when --path matched no file at all."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from .parser import UsageError
from .services import root_of, workspace_of

if TYPE_CHECKING:
    from ..filters import Filters


def scope_filters(args: argparse.Namespace) -> Filters:
    from ..filters import Filters
    from ..ingest.languages import known_languages
    from ..vocabulary import ALL_KINDS
    filters = Filters(language=args.lang, kind=args.kind, path_glob=args.path)
    if filters.language and filters.language not in known_languages():
        raise UsageError(f"unknown language {args.lang!r}; known: {', '.join(sorted(known_languages()))}")
    if args.kind and args.kind not in ALL_KINDS:
        raise UsageError(f"unknown kind {args.kind!r}; known: {', '.join(sorted(ALL_KINDS))}")
    return filters


def repository_roots(args: argparse.Namespace) -> dict[str | None, Path]:
    """Each repository's root by the name answers give it (None: the one repository)."""
    workspace = workspace_of(args)
    if workspace is None:
        return {None: root_of(args)}
    return {r.name: r.root for r in workspace.repos}


def note_unmatched_path(args: argparse.Namespace) -> None:
    """After an empty answer in text: say so when --path matched no file at all."""
    from .path_note import note_unmatched_path as note_for_roots
    if args.path:
        note_for_roots([str(root) for root in repository_roots(args).values()], args.path)
