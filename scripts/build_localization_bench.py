#!/usr/bin/env python3
"""Build the bug-localization benchmark from the git history of the benchmark repositories.

A query is a commit's message (subject and body, trailers removed); its answer is the non-test
source files the commit modified (files that existed in the parent). Only commits whose message
describes a problem are kept, by this rule (`select`), applied to every non-merge ancestor of
each repository's pinned revision:

  1. not a merge; the subject is not a revert, a release or version bump, or a change whose
     Conventional-Commits type is docs, chore, ci, build, style, test, refactor or perf;
  2. the message describes a problem: a word of fixing or failing in the subject (fix, bug,
     crash, error, exception, regression, broken, wrong, incorrect, fail, panic, segfault,
     leak, hang, deadlock, "does not", "doesn't", ...), or a `fix:`/`fix(...)` type;
  3. it is not about typos, spelling, comments, docs, lint, formatting, warnings, CI, the build,
     tests or dependencies (words in the subject);
  4. the message has at least MIN_WORDS words (a bug report says something);
  5. it modified 1 to MAX_ANSWER_FILES source files of the program (grammar-backed languages;
     not tests, examples, docs, benchmarks or vendored code as codesearch's `is_secondary_path`
     defines them, not in a folder named for tests or a hidden folder, not a build manifest)
     that existed in the parent, and changed at most MAX_CHANGED_FILES files in all;
  6. it changed at least one line of those files that is neither blank nor a comment;
  7. the first of several commits with the same subject (cherry-picks, backports) is kept.

Per repository the most recent `--per-repo` qualifying commits are kept (git's topological
order from the pinned revision): recent commits keep the walk through history short.

Usage: scripts/build_localization_bench.py [--mirrors /work/.mirror] [--per-repo 12]
           [--out ~/.cache/codesearch-loc/commits.json] [NAME ...]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from codesearch.analysis.content_class import is_secondary_path
from codesearch.eval.bench import SHARED_BENCH
from codesearch.ingest.languages import spec_for_path

MIN_WORDS = 5  # words of the message, trailers and issue references left out
MAX_ANSWER_FILES = 5  # modified non-test source files: more is a sweeping change, not a fix
MAX_CHANGED_FILES = 20  # all files the commit touched
DEFAULT_OUT = Path.home() / ".cache" / "codesearch-loc" / "commits.json"

PROBLEM = re.compile(
    r"\b(fix(es|ed|ing)?|bug(s|gy)?|hotfix|crash(es|ed|ing)?|errors?|erroneous(ly)?|exceptions?|regression|"
    r"broken|breaks?|wrong(ly)?|incorrect(ly)?|fail(s|ed|ing|ures?)?|panic(s|ked|king)?|segfaults?|"
    r"segmentation|leak(s|ed|ing)?|hangs?|hung|deadlocks?|race|overflows?|underflow|corrupt(s|ed|ion)?|"
    r"mistake|misbehav\w*|infinite|npe|null pointer|unhandled|uncaught|"
    r"does ?n[o']t|did ?n[o']t|do ?n[o']t|is ?n[o']t|can ?n[o']t|cannot|wo ?n't|should ?n[o']t|"
    r"avoid(s|ed|ing)?|prevent(s|ed|ing)?|handle|properly|correct(ly|ed|s)?|resolve[sd]?|issue)\b",
    re.IGNORECASE)
# the strong words alone qualify a subject; the weak ones (avoid, prevent, handle, ...) only
# with a strong word in the subject or the body
STRONG = re.compile(
    r"\b(fix(es|ed|ing)?|bug(s|gy)?|hotfix|crash(es|ed|ing)?|errors?|exceptions?|regression|broken|"
    r"wrong(ly)?|incorrect(ly)?|fail(s|ed|ing|ures?)?|panic(s|ked|king)?|segfaults?|leak(s|ed|ing)?|"
    r"hangs?|deadlocks?|corrupt(s|ed|ion)?|does ?n[o']t|is ?n[o']t|should ?n[o']t)\b",
    re.IGNORECASE)
CONVENTIONAL = re.compile(r"^\s*(\w+)(\([^)]*\))?!?:")
NOT_CODE_TYPES = {"docs", "doc", "chore", "ci", "build", "style", "test", "tests", "refactor", "perf", "release",
                  "deps", "bench", "example", "examples"}
NOT_A_BUG = re.compile(
    r"\b(typos?|spelling|misspell\w*|grammar|comments?|docs?|documentation|docstrings?|readme|changelog|"
    r"lint(er|ing|s)?|clippy|rustfmt|gofmt|prettier|eslint|format(ting)?|whitespace|warnings?|"
    r"ci|workflows?|github actions?|travis|appveyor|azure pipelines|build (error|failure|fix)|fix(es|ed)? (the )?build|"
    r"flaky|deps|dependenc(y|ies)|bump(s|ed)?|license|copyright|mypy|typing|type hints?|codespell|"
    r"error ?prone|clang-tidy|ruff|shellcheck|static analysis|-W[\w-]+|"
    r"revert(s|ed)?)\b"
    r"|\b(fix(es|ed|ing)?|update[sd]?|add(s|ed)?|improve[sd]?|skip(s|ped)?)( the| a| some)?( broken| failing)? "
    r"(unit |integration )?(tests?|specs?|testsuite|test suite|benchmarks?)\b",
    re.IGNORECASE)
TRAILER = re.compile(r"^[A-Za-z][\w-]*(-by|-Id|-URL|-authored-by)?:\s", re.IGNORECASE)
TRAILER_KEYS = re.compile(r"^(signed-off-by|co-authored-by|reviewed-by|acked-by|tested-by|reported-by|"
                          r"suggested-by|helped-by|pr-url|change-id|refs?|closes?|fixes|resolves?|see|"
                          r"cc|backport-of|cherry-picked from)\b", re.IGNORECASE)


def git(gitdir: Path, *args: str) -> str:
    return subprocess.run(["git", f"--git-dir={gitdir}", "-c", "core.quotepath=off", *args],
                          check=True, capture_output=True, text=True, errors="replace").stdout


def clean_message(message: str) -> str:
    """The message without trailer lines (Signed-off-by, Co-authored-by, PR-URL, ...) and
    without the `(cherry picked from ...)` note: what a person wrote about the change."""
    lines = [ln for ln in message.strip().split("\n")
             if not TRAILER_KEYS.match(ln.strip()) and not ln.strip().startswith("(cherry picked from")]
    return "\n".join(lines).strip()


def words_of(message: str) -> list[str]:
    text = re.sub(r"#\d+|https?://\S+|\b[0-9a-f]{7,40}\b", " ", message)
    return re.findall(r"[A-Za-z_][\w.]*", text)


def message_verdict(message: str) -> str:
    """'' when the message describes a problem, else the reason it was rejected."""
    subject, _, body = message.partition("\n")
    conventional = CONVENTIONAL.match(subject)
    kind = conventional.group(1).lower() if conventional else ""
    if kind in NOT_CODE_TYPES:
        return f"type {kind}:"
    if re.match(r"^\s*(revert|release|bump|prepare|merge)\b", subject, re.IGNORECASE) or \
            re.search(r"\bv?\d+\.\d+(\.\d+)?\b.*\b(release|changelog)\b|\bversion \d", subject, re.IGNORECASE):
        return "release or revert"
    scope_free = subject[conventional.end():] if conventional else subject
    if NOT_A_BUG.search(scope_free):
        return "not about behaviour"
    if kind not in ("fix", "bugfix", "hotfix"):
        if not PROBLEM.search(scope_free):
            return "no problem described"
        if not STRONG.search(scope_free) and not STRONG.search(body):
            return "no problem described"
    if len(words_of(message)) < MIN_WORDS:
        return "too short"
    return ""


def changed_files(gitdir: Path, commit: str) -> list[tuple[str, str]]:
    """(status letter, path) of each file the commit changed against its parent, no renames."""
    out = git(gitdir, "diff-tree", "-r", "--no-commit-id", "--no-renames", "--name-status", "-z", commit)
    fields = out.split("\0")
    return [(fields[i][0], fields[i + 1]) for i in range(0, len(fields) - 1, 2)]


HASH_COMMENTS = ("#",)
SLASH_COMMENTS = ("//", "/*", "*")
COMMENT_PREFIXES = {  # language -> how its comment (and documentation) lines start
    "python": ("#", '"""', "'''"), "ruby": HASH_COMMENTS, "bash": HASH_COMMENTS, "elixir": ("#", "@doc", "@moduledoc"),
    "lua": ("--",), "haskell": ("--", "{-", "-}"), "php": ("#", *SLASH_COMMENTS), "zig": ("//",)}


def changes_code(gitdir: Path, commit: str, paths: list[str]) -> bool:
    """Whether the commit changed a line of these files that is neither blank nor a comment
    (a line-based test: a changed line that starts like a comment of the file's language)."""
    diff = git(gitdir, "show", "-U0", "--format=", commit, "--", *paths)
    prefixes: tuple[str, ...] = SLASH_COMMENTS
    for line in diff.split("\n"):
        if line.startswith("diff --git "):
            spec = spec_for_path(line.rsplit(" b/", 1)[-1])
            prefixes = COMMENT_PREFIXES.get(spec.name if spec else "", SLASH_COMMENTS)
        elif line[:1] in "+-" and not line.startswith(("+++", "---")):
            text = line[1:].strip()
            if text and not text.startswith(prefixes):
                return True
    return False


# build manifests and scripts: code, but a fix in one is a fix of the build, not of the program
BUILD_FILE = re.compile(r"(^|/)(setup\.py|noxfile\.py|build\.gradle(\.kts)?|settings\.gradle(\.kts)?|"
                        r"Package(@[^/]*)?\.swift|[^/]*\.gemspec|mix\.exs|build\.zig|build\.rs|Rakefile|Gemfile)$")
# hidden folders (.github, .circleci) and any folder named for tests (integration-testing, mavenTest)
NOT_PROGRAM_FOLDER = re.compile(r"(^|/)(\.[^/]+|[^/]*test[^/]*)/", re.IGNORECASE)


def answer_files(changes: list[tuple[str, str]]) -> list[str]:
    """Modified (not added, not deleted) grammar-backed source files of the program itself: not
    tests, examples, docs, benchmarks or vendored code (codesearch's `is_secondary_path`), not in a
    folder named for tests or a hidden folder, not a build manifest."""
    return sorted(p for status, p in changes if status == "M" and spec_for_path(p) and not is_secondary_path(p)
                  and not BUILD_FILE.search(p) and not NOT_PROGRAM_FOLDER.search(p))


def select(gitdir: Path, revision: str, per_repo: int) -> tuple[list[dict], Counter]:
    """The newest `per_repo` commits that pass the rule, newest first, and the rejections."""
    log = git(gitdir, "log", "--topo-order", "--format=%x1e%H%x1f%P%x1f%ct%x1f%B", revision)
    kept: list[dict] = []
    rejected: Counter = Counter()
    subjects: set[str] = set()
    for record in log.split("\x1e")[1:]:
        commit, parents, when, message = record.split("\x1f", 3)
        if len(kept) >= per_repo:
            break
        if len(parents.split()) != 1:
            rejected["merge or root"] += 1
            continue
        message = clean_message(message)
        verdict = message_verdict(message)
        if verdict:
            rejected[verdict] += 1
            continue
        subject = message.split("\n", 1)[0].strip().lower()
        if subject in subjects:
            rejected["same subject as a newer commit"] += 1
            continue
        changes = changed_files(gitdir, commit)
        answer = answer_files(changes)
        if not answer:
            rejected["no modified non-test source file"] += 1
            continue
        if len(answer) > MAX_ANSWER_FILES or len(changes) > MAX_CHANGED_FILES:
            rejected["too many files"] += 1
            continue
        if not changes_code(gitdir, commit, answer):
            rejected["comments or blank lines only"] += 1
            continue
        subjects.add(subject)
        kept.append({"commit": commit, "parent": parents.strip(), "time": int(when), "query": message,
                     "files": answer, "changed_files": len(changes)})
    return kept, rejected


def mirror_of(url: str, mirrors: Path) -> Path:
    owner, name = url.rstrip("/").removesuffix(".git").split("/")[-2:]
    return mirrors / f"{owner}+{name}" / "repo"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--repos-json", type=Path, default=SHARED_BENCH / "repos.json")
    parser.add_argument("--per-repo", type=int, default=12)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("names", nargs="*")
    args = parser.parse_args()

    repos, commits = [], []
    rejected_all: Counter = Counter()
    for repo in json.loads(args.repos_json.read_text()):
        if args.names and repo["name"] not in args.names:
            continue
        gitdir = mirror_of(repo["url"], args.mirrors)
        if not gitdir.is_dir():
            print(f"missing mirror: {gitdir}", file=sys.stderr)
            return 1
        kept, rejected = select(gitdir, repo["revision"], args.per_repo)
        rejected_all.update(rejected)
        repos.append({"name": repo["name"], "language": repo["language"], "git_dir": str(gitdir),
                      "revision": repo["revision"], "selected": len(kept), "rejected": dict(rejected)})
        commits += [{"repo": repo["name"], "language": repo["language"], **c} for c in kept]
        span = (kept[0]["time"] - kept[-1]["time"]) / 86400 if kept else 0
        print(f"{repo['name']:<20} {repo['language']:<11} {len(kept):>3} kept over {span:>5.0f} days; "
              f"{sum(rejected.values())} rejected", file=sys.stderr)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    rule = {"min_words": MIN_WORDS, "max_answer_files": MAX_ANSWER_FILES, "max_changed_files": MAX_CHANGED_FILES,
            "per_repo": args.per_repo, "text": __doc__.split("Usage:")[0].strip()}
    args.out.write_text(json.dumps({"rule": rule, "repos": repos, "commits": commits}, indent=1))
    languages = Counter(c["language"] for c in commits)
    print(f"{len(commits)} commits, {len(languages)} languages -> {args.out}", file=sys.stderr)
    print("rejected (until each repository's quota was reached): " +
          ", ".join(f"{k} {v}" for k, v in rejected_all.most_common()), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
