"""`codesearch callers`, `callees` and `impact`: relations along the call graph, asked of the
repository's service (its daemon, or the index in process) and printed as grep prints matches."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any, TypeVar

from .color import use_color
from .parser import EXIT_OK, UsageError
from .scoping import note_unmatched_path, repository_roots, scope_filters
from .services import answer_with, workspace_of

if TYPE_CHECKING:
    from ..api.types import Direction
    from ..filters import Filters
    from ..search.requests import ImpactAnswer, RelationsAnswer, RelationsRequest

R = TypeVar("R", bound="RelationsRequest")


def cmd_relations(args: argparse.Namespace) -> int:
    from ..search.requests import RelationsRequest
    from .render import format_relations
    direction: Direction = "callers" if args.command == "callers" else "callees"
    request = relation_request(RelationsRequest, args, scope_filters(args), direction=direction)
    answer = answer_with(args, lambda service: service.relations(request))
    if _printed_as_json_or_unknown(args, answer):
        return EXIT_OK
    if answer.results:
        print(format_relations(answer, repository_roots(args), color=use_color(args.color, sys.stdout)))
    _notes(args, answer.note, f"no {direction} of {args.name!r} found" if not answer.results else None)
    return EXIT_OK


def cmd_impact(args: argparse.Namespace) -> int:
    """What may break if NAME changes: its callers, theirs, ... `--depth` hops out, by file."""
    from ..search.requests import ImpactRequest
    from .render import format_impact
    request = relation_request(ImpactRequest, args, scope_filters(args))
    answer = answer_with(args, lambda service: service.impact(request))
    if _printed_as_json_or_unknown(args, answer):
        return EXIT_OK
    if answer.files:
        print(format_impact(answer, color=use_color(args.color, sys.stdout)))
    _notes(args, answer.note, f"no callers of {args.name!r} found" if not answer.files else None)
    return EXIT_OK


def relation_request(kind: type[R], args: argparse.Namespace, filters: Filters, **fields: Any) -> R:
    """The request of this kind the arguments make; a usage error where they break its rules."""
    from ..wire import RequestError
    try:
        return kind(name=args.name, depth=args.depth, limit=args.limit, filters=filters, **fields)
    except RequestError as exc:
        raise UsageError(str(exc)) from None


def _printed_as_json_or_unknown(args: argparse.Namespace, answer: RelationsAnswer | ImpactAnswer) -> bool:
    """Whether the answer is told already: as JSON, or as a name the index does not know."""
    if args.json:
        print(json.dumps(answer.to_dict(), ensure_ascii=False))
        return True
    if not answer.targets:
        print(f"no definition named {args.name!r} in the index", file=sys.stderr)
        return True
    return False


def _notes(args: argparse.Namespace, note: str | None, empty: str | None) -> None:
    """A workspace's note (a repository that could not answer), and what an empty answer means."""
    if note and workspace_of(args) is not None:
        print(f"codesearch: {note}", file=sys.stderr)
    if empty:
        print(empty, file=sys.stderr)
        note_unmatched_path(args)
