"""Gitignore-style rules: .gitignore at every level, .git/info/exclude and .codesearchignore."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

import pathspec

from ..config import IGNORE_FILE_NAME
from ..paths import unescape_name

IGNORE_FILES = (".gitignore", IGNORE_FILE_NAME)
ALWAYS_SKIPPED_DIRS = frozenset({".git", ".hg", ".svn"})
RULES_CACHED = 1024  # distinct rule-file texts kept compiled

# the parts of a regex that matter for joining it with others: an escape, a character class,
# a named group's opening, any other parenthesis, an alternation bar
_REGEX_TOKEN = re.compile(r"\\.|\[\^?\]?(?:\\.|[^\]\\])*\]|\(\?P<\w+>|[()|]", re.DOTALL)
_ANY_FOLDERS = "(?:.+/)?"  # how pathspec starts a pattern that matches at any depth


class FolderRules:
    """One folder's rule files, read as one spec (a later line overrides an earlier one).

    Most paths match none of a folder's patterns; one search of a regex that joins them all
    answers that, where the spec tries them one by one (about 20 searches in Python per path on
    a typical .gitignore). Only a path the joined regex matches is asked of the spec itself."""

    __slots__ = ("_any", "spec")

    def __init__(self, spec: pathspec.GitIgnoreSpec):
        self.spec = spec
        self._any = _any_pattern(spec)

    def decide(self, sub: str) -> bool | None:
        """True when `sub` (relative to this folder, '/' at the end for a folder) is ignored,
        False when a negation includes it again, None when no pattern here speaks of it."""
        if self._any is not None and self._any.search(sub) is None:
            return None
        include = self.spec.check_file(sub).include
        return None if include is None else bool(include)


def _plain(regex: str) -> tuple[str, bool]:
    """`regex` with its named groups made plain (they only mark where a pattern matched, and
    every pattern uses the same name), and whether it has an alternation outside any group."""
    depth, bare_bar, out, last = 0, False, [], 0
    for m in _REGEX_TOKEN.finditer(regex):
        token = m.group(0)
        if token[0] in "\\[":
            continue
        if token == ")":
            depth -= 1
        elif token == "|":
            bare_bar = bare_bar or depth == 0
        else:
            depth += 1
            if token != "(":
                out += [regex[last:m.start()], "(?:"]
                last = m.end()
    out.append(regex[last:])
    return "".join(out), bare_bar


def _any_pattern(spec: pathspec.GitIgnoreSpec) -> re.Pattern[str] | None:
    """A regex that matches a path when one of the spec's patterns does, or None where they do
    not join (the spec then answers every path itself).

    pathspec anchors each pattern at the start, and starts most with "any folders, then": those
    share that start, so it is tried once per path rather than once per pattern (several times
    faster on the .gitignore files of the benchmark repositories)."""
    regexes: list[re.Pattern[str]] = []
    for pattern in spec.patterns:
        regex = getattr(pattern, "regex", None)
        if pattern.include is None or regex is None:
            continue  # a comment or blank line: never matches
        if (not isinstance(regex.pattern, str) or regex.flags & re.VERBOSE
                or (regexes and regex.flags != regexes[0].flags)):
            return None
        regexes.append(regex)
    if not regexes:
        return re.compile(r"(?!)")  # nothing to match
    flags = regexes[0].flags
    plain = [_plain(r.pattern) for r in regexes]
    if flags & re.MULTILINE or any(bar or not text.startswith("^") for text, bar in plain):
        joined = "|".join(f"(?:{text})" for text, _ in plain)  # as they are: a search finds any
    else:
        deep = [text[1 + len(_ANY_FOLDERS):] for text, _ in plain if text.startswith("^" + _ANY_FOLDERS)]
        rest = [text[1:] for text, _ in plain if not text.startswith("^" + _ANY_FOLDERS)]
        branches = ([f"{_ANY_FOLDERS}(?:{'|'.join(f'(?:{t})' for t in deep)})"] if deep else []) + rest
        joined = "^(?:" + "|".join(f"(?:{b})" for b in branches) + ")"
    try:
        return re.compile(joined, flags)
    except re.error:
        return None


Chain = tuple[tuple[int, FolderRules], ...]
"""The rules that apply in one folder, deepest folder first: (how many characters of a path
belong to that folder's prefix, its rules). A deeper folder's rules override a shallower one's."""


def ignored_by(chain: Chain, rel: str, is_dir: bool) -> bool:
    """True when the rules in `chain` (those of `rel`'s folder) exclude `rel`."""
    if rel[rel.rfind("/") + 1:] in ALWAYS_SKIPPED_DIRS:
        return True
    tail = "/" if is_dir else ""
    for cut, rules in chain:
        decision = rules.decide(rel[cut:] + tail)
        if decision is not None:
            return decision
    return False


def _read_rules(paths: Iterable[str | Path]) -> FolderRules | None:
    lines: list[str] = []
    for path in paths:
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                lines.extend(handle.read().splitlines())
        except OSError:
            continue
    return _compiled("\n".join(lines)) if lines else None


@lru_cache(maxsize=RULES_CACHED)
def _compiled(text: str) -> FolderRules:
    """Rules by their text: the same .gitignore recurs across a monorepo's packages (109 texts in
    576 files on the test monorepo), and a daemon walks the same tree again on every change."""
    lines = text.split("\n")
    try:
        return FolderRules(pathspec.GitIgnoreSpec.from_lines(lines))
    except ValueError:  # a line pathspec cannot read (a lone `\`): git skips such a pattern, so do we
        return FolderRules(pathspec.GitIgnoreSpec.from_lines([line for line in lines if _readable(line)]))


def _readable(line: str) -> bool:
    try:
        pathspec.GitIgnoreSpec.from_lines([line])
    except ValueError:
        return False
    return True


class IgnoreRules:
    """Answers "is this path ignored?" the way git does, deepest rule file first.

    Rule files are read lazily per directory and cached; call `forget(dir)` when one changes.
    A walk asks `chain_below` once per folder and matches each entry against that chain alone;
    `is_ignored` builds the chain of one path's folder for paths that arrive one at a time.
    """

    def __init__(self, root: Path):
        self.root = root
        self._folders: dict[str, FolderRules | None] = {}
        extra = _read_rules([root / ".git" / "info" / "exclude"])
        self.outside: Chain = ((0, extra),) if extra else ()  # .git/info/exclude: below the root's files

    def forget(self, rel_dir: str = "") -> None:
        """Drop cached rules (all of them when rel_dir is empty), e.g. after a .gitignore edit."""
        if not rel_dir:
            self._folders.clear()
        else:
            self._folders.pop(rel_dir, None)

    def chain_below(self, rel_dir: str, above: Chain, present: Iterable[str] | None = None) -> Chain:
        """The chain for the entries of `rel_dir`, given `above`, the chain `rel_dir` itself was
        matched with (`outside` for the root). `present`: the rule files the folder holds, when
        the caller has listed it (saves looking for files that are not there)."""
        if rel_dir not in self._folders:
            folder = os.path.join(self.root, unescape_name(rel_dir)) if rel_dir else str(self.root)
            names = IGNORE_FILES if present is None else [n for n in IGNORE_FILES if n in present]
            self._folders[rel_dir] = _read_rules([os.path.join(folder, name) for name in names])
        rules = self._folders[rel_dir]
        return above if rules is None else ((len(rel_dir) + 1 if rel_dir else 0, rules), *above)

    def chain_for(self, rel_dir: str) -> Chain:
        """The chain for the entries of `rel_dir`, from the root down."""
        chain = self.chain_below("", self.outside)
        if rel_dir:
            parts = rel_dir.split("/")
            for depth in range(1, len(parts) + 1):
                chain = self.chain_below("/".join(parts[:depth]), chain)
        return chain

    def is_ignored(self, rel_path: str, is_dir: bool) -> bool:
        """True when the rules exclude `rel_path` ('/'-separated, relative to the root).

        Ancestors are not checked here: the walker never descends into an ignored folder, and
        `is_ignored_anywhere` checks the whole chain for paths that arrive from outside a walk.
        """
        return ignored_by(self.chain_for(rel_path.rpartition("/")[0]), rel_path, is_dir)

    def is_ignored_anywhere(self, rel_path: str, is_dir: bool) -> bool:
        """Like is_ignored, but also true when any parent folder is ignored."""
        parts = rel_path.split("/")
        chain = self.chain_below("", self.outside)
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth])
            if ignored_by(chain, folder, True):
                return True
            chain = self.chain_below(folder, chain)
        return ignored_by(chain, rel_path, is_dir)
