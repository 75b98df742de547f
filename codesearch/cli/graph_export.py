"""`codesearch graph export`: the repository's call graph, or the neighbourhood of the definitions
some names mean, written as GraphML, GEXF, JSON or DOT to stdout or a file."""

from __future__ import annotations

import argparse
import os
import sys

from .parser import EXIT_ERROR, EXIT_OK, GRAPH_DEPTH, CommandError, UsageError
from .services import open_index, root_of


def cmd_graph(args: argparse.Namespace) -> int:
    from ..graph import neighbourhood, repository_graph, write_graph
    from ..search.relations import definitions_named
    if args.depth is not None and not args.names:
        raise UsageError("--depth counts hops from the definitions of NAME: give one or more names")
    if args.depth is not None and args.depth < 0:
        raise UsageError(f"--depth takes a number of hops from 0 up, not {args.depth}")
    index = open_index(args)
    try:
        if args.names:
            ids: list[str] = []
            for name in args.names:
                found = definitions_named(index.catalog, name)
                if not found:
                    raise CommandError(f"no definition named {name!r} in the index of {root_of(args)}")
                ids += found
            graph = neighbourhood(index, ids, GRAPH_DEPTH if args.depth is None else args.depth)
        else:
            graph = repository_graph(index)
    finally:
        index.close()
    if args.output:
        with open(args.output, "wb") as out:
            write_graph(graph, args.format, out)
        return EXIT_OK
    try:
        write_graph(graph, args.format, sys.stdout.buffer)
        sys.stdout.buffer.flush()
    except BrokenPipeError:  # the reader went away (`| head`): nothing more to tell it, nor at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_ERROR
    return EXIT_OK
