"""The command line: argument parsing and rendering only; the work is done below."""

from __future__ import annotations


def main(argv: list[str] | None = None) -> int:
    """`codesearch ARGS`: a query that a running daemon answers takes the fast path (`quick`),
    everything else the full one (`main`)."""
    import os
    import sys

    from .quick import answer
    try:
        code = answer(sys.argv[1:] if argv is None else argv)
        if code is not None:
            return code
        from .commands import main as run
        return run(argv)
    except BrokenPipeError:  # the reader went away (`| head`): a quiet success, as ripgrep's
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing more at exit, when stdout is flushed
        return 0


__all__ = ["main"]
