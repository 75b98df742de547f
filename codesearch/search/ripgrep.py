"""Running ripgrep over the repository: its command line, the run itself (read while it writes,
stopped past a deadline) and the re-run of files whose folders changed meanwhile.

ripgrep (the `rg` binary of the `ripgrep` wheel) does the scanning: a finite-automaton engine, so
no pattern can backtrack for ever, with the repository's .gitignore rules and parallel reading.
Python's `re` over every file was many times slower on the benchmark's trees, and a trigram
prefilter in the catalog would index what rg already reads at disk speed.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

from ..access import AccessRule
from ..filters import rg_globs
from ..paths import confine, on_disk, unescape_name, unsteady
from ..wire import RequestError
from .requests import MAX_GREP_MATCHES, GrepRequest
from .rg_output import MatchedLines, RgReader

RG_TIMEOUT_SECONDS = 30.0
CTIME_LAG_SECONDS = 0.05  # a folder's ctime is stamped from a clock that may lag by a tick (1-10 ms)
STEADY_TRIES = 3  # searches of files whose folders changed meanwhile, before they are left out
IGNORE_FILE = ".codesearchignore"
READ_BYTES = 1 << 18  # ripgrep's output is cut into fields this much at a time
PIPE_BYTES = 1 << 20  # the pipe it writes into holds this much meanwhile (Linux's usual limit)


class GrepUnavailable(RuntimeError):
    """No ripgrep binary to run."""


def rg_binary() -> str:
    """The `rg` of this environment (the ripgrep wheel puts it beside the interpreter), else PATH's."""
    beside = Path(sys.executable).parent / "rg"
    if beside.exists():
        return str(beside)
    found = shutil.which("rg")
    if found is None:
        raise GrepUnavailable("ripgrep is not installed: pip install ripgrep==14.1.0")
    return found


def rg_command(root: Path, index_dir: Path, request: GrepRequest, only_matching: bool = False) -> list[str]:
    """ripgrep's arguments. The access rule's exclusions come after the client's glob, so no
    glob can bring `.git` or the index back; explicit paths must pass the rule and exist.
    `only_matching`: each match's text instead of its line's (the early answer's words)."""
    access = AccessRule(root, index_dir)
    command = [rg_binary(), "--no-config", "--null", "--line-number", "--column",
               "--no-heading" if request.before or request.after else "--heading",
               "--with-filename", "--color", "never", "--no-messages", "--no-require-git"]
    if (root / IGNORE_FILE).is_file():
        command += ["--ignore-file", str(root / IGNORE_FILE)]
    command.append("--ignore-case" if request.ignore_case else "--case-sensitive")
    if request.fixed:
        command.append("--fixed-strings")
    if request.word:
        command.append("--word-regexp")
    if only_matching:
        command.append("--only-matching")
    if request.before:
        command += ["--before-context", str(request.before)]
    if request.after:
        command += ["--after-context", str(request.after)]
    if request.filters.path_glob:
        for glob in rg_globs(request.filters.path_glob):
            command += ["--glob", glob]
    command += access.rg_exclusions()
    command += ["--regexp", request.pattern, "--"]
    if request.paths:
        command += [_searchable(root, access, p) for p in request.paths]
    return command


def _searchable(root: Path, access: AccessRule, path: str) -> str:
    """A client's path as ripgrep is given it: confined, allowed by the access rule, present."""
    rel = confine(root, path)
    refusal = access.refusal(rel) if rel else None
    if refusal:
        raise RequestError(f"{path} cannot be searched: {refusal}")
    if not os.path.lexists(on_disk(root, rel)):
        raise RequestError(f"{path} does not exist")
    return unescape_name(rel) or "."  # the name on disk: a byte that is no UTF-8 is no `\\xNN` to ripgrep


def run_rg(root: Path, index_dir: Path, request: GrepRequest, only_matching: bool = False
           ) -> tuple[MatchedLines, bool]:
    """The matching lines, with their context; and whether the read stopped at MAX_GREP_MATCHES.
    Cut into fields READ_BYTES at a time while ripgrep goes on writing into a pipe as large as
    the system allows. Raises RequestError for a pattern ripgrep refuses, or a search that runs
    past RG_TIMEOUT_SECONDS (ripgrep is stopped then)."""
    process = subprocess.Popen(rg_command(root, index_dir, request, only_matching), cwd=root, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    assert process.stdout is not None and process.stderr is not None
    with contextlib.suppress(AttributeError, OSError):  # Linux only; 64 KB otherwise
        fcntl.fcntl(process.stdout.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    reader = RgReader(request.before, request.after, MAX_GREP_MATCHES)
    late = threading.Event()

    def stop() -> None:
        late.set()
        process.kill()
    timer = threading.Timer(RG_TIMEOUT_SECONDS, stop)
    timer.start()
    try:
        while not reader.full:
            data = process.stdout.read(READ_BYTES)  # all of it, unless the output ends first
            reader.feed(data, final=len(data) < READ_BYTES)
            if len(data) < READ_BYTES:
                break
    finally:
        timer.cancel()
        if process.poll() is None:
            process.kill()
        process.stdout.close()
        errors = process.stderr.read().decode("utf-8", errors="replace")
        process.stderr.close()
        code = process.wait()
    if late.is_set():
        raise RequestError(f"the search took over {RG_TIMEOUT_SECONDS:.0f} s; narrow the pattern or the paths")
    if code == 2 and not len(reader.hits) and not reader.full and errors.strip():
        raise RequestError(_first_error(errors))  # silent: no file passed the filters, so none matched
    return reader.hits, reader.full


def run_rg_steadily(root: Path, index_dir: Path, request: GrepRequest, only_matching: bool = False
                    ) -> tuple[MatchedLines, bool]:
    """`run_rg`, keeping only lines of files that ripgrep surely read inside the root. ripgrep
    opens files by name, so a folder swapped for a link to /etc while it walks would have it
    read /etc's files under the folder's name: the files whose way changed during the search
    (`paths.unsteady`) are searched again, after a pause, STEADY_TRIES times at most, then left
    out. Files the access rule refuses (an ignored `.env` that a client's glob whitelisted) go."""
    access = AccessRule(root, index_dir)
    for attempt in range(STEADY_TRIES):
        since = time.time() - CTIME_LAG_SECONDS
        hits, truncated = run_rg(root, index_dir, request, only_matching)
        names = [name.removeprefix("./") for name in hits.files]
        shaky = unsteady(root, names, since)
        if not any(shaky) or attempt == STEADY_TRIES - 1:
            break
        time.sleep(CTIME_LAG_SECONDS * (attempt + 1))
    refused = [bad or access.refusal(name) is not None for bad, name in zip(shaky, names)]
    if any(refused):
        hits = hits.keep_files(lambda f: not refused[f])
        hits.changed = sum(shaky)
    return hits, truncated


def _first_error(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    if not lines:
        return ""
    if "regex parse error" in lines[0] or lines[0].startswith("rg: regex"):
        detail = lines[-1].removeprefix("error: ")
        return f"invalid regular expression: {detail}"
    return lines[0].removeprefix("rg: ")
