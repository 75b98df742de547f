#!/usr/bin/env python3
"""Build a monorepo of 100,000 files or more from the benchmark's real repositories.

usage: scripts/build_monorepo.py DEST [--files 100000] [--mirrors /work/.mirror]

Each of the 22 benchmark repositories (../shared/bench/repos.json) is taken whole, with its
history, from a bare git mirror (the `fetch` tool puts them in /work/.mirror/OWNER+NAME/repo).
DEST gets, side by side, the trees of several commits of each, spaced evenly over its
first-parent history up to the pinned revision: `DEST/NAME/REV12/...`. Revisions are added round
by round (one more of every repository a round) until DEST holds at least --files files, so the
mix of languages stays that of the benchmark, and the copies differ as real history does (code
grows, moves and is rewritten) rather than being identical. A `.git` marker folder at DEST makes
it one repository for codesearch. Nothing of these trees belongs in this project's repository.
"""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
import tarfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from codesearch.eval.bench import SHARED_BENCH


def mirror_of(url: str, mirrors: Path) -> Path:
    owner, name = url.rstrip("/").removesuffix(".git").split("/")[-2:]
    return mirrors / f"{owner}+{name}" / "repo"


def first_parent_history(gitdir: Path, revision: str) -> list[str]:
    out = subprocess.run(["git", f"--git-dir={gitdir}", "rev-list", "--first-parent", revision],
                         capture_output=True, text=True, check=True).stdout.split()
    return out  # newest first


def spaced(history: list[str], count: int) -> list[str]:
    """`count` commits spread evenly from the newest back over the history (the newest first)."""
    if count >= len(history):
        return history
    step = len(history) / count
    return [history[int(i * step)] for i in range(count)]


def export_tree(gitdir: Path, revision: str, dest: Path) -> int:
    """Write the tree of `revision` under `dest` with `git archive`; the number of files."""
    archive = subprocess.run(["git", f"--git-dir={gitdir}", "archive", "--format=tar", revision],
                             capture_output=True)
    if archive.returncode != 0:  # blobs missing from a partial mirror: export what is there
        script = SHARED_BENCH / "export_repo.py"
        subprocess.run([sys.executable, str(script), str(gitdir), revision, str(dest)], check=True,
                       capture_output=True)
        return sum(1 for p in dest.rglob("*") if p.is_file())
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        members = [m for m in tar.getmembers() if m.isfile() or m.isdir()]  # no links, no devices
        tar.extractall(dest, members=members, filter="data")
        return sum(1 for m in members if m.isfile())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dest", type=Path)
    parser.add_argument("--files", type=int, default=100_000, help="stop once the tree holds this many files")
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--repos-json", type=Path, default=SHARED_BENCH / "repos.json")
    parser.add_argument("--max-rounds", type=int, default=60)
    args = parser.parse_args()

    repos = json.loads(args.repos_json.read_text())
    histories: dict[str, tuple[Path, list[str]]] = {}
    for repo in repos:
        gitdir = mirror_of(repo["url"], args.mirrors)
        if not gitdir.is_dir():
            print(f"missing mirror {gitdir}: fetch github:{'/'.join(repo['url'].split('/')[-2:])[:-4]} first",
                  file=sys.stderr)
            return 1
        histories[repo["name"]] = (gitdir, first_parent_history(gitdir, repo["revision"]))
    args.dest.mkdir(parents=True, exist_ok=True)
    (args.dest / ".git").mkdir(exist_ok=True)  # one repository root for codesearch
    done: dict[str, set[str]] = {name: {p.name for p in (args.dest / name).iterdir()}
                                 if (args.dest / name).is_dir() else set() for name in histories}
    total = sum(1 for p in args.dest.rglob("*") if p.is_file())
    rounds = 0
    while total < args.files and rounds < args.max_rounds:
        rounds += 1
        for name, (gitdir, history) in histories.items():
            wanted = spaced(history, rounds)
            for revision in wanted:
                if revision[:12] in done[name]:
                    continue
                total += export_tree(gitdir, revision, args.dest / name / revision[:12])
                done[name].add(revision[:12])
                break  # one more revision of each repository per round
            if total >= args.files:
                break
        print(f"round {rounds}: {total:,} files", file=sys.stderr)
    revisions = sum(map(len, done.values()))
    print(f"{args.dest}: {total:,} files from {revisions} revisions of {len(histories)} repositories")
    return 0


if __name__ == "__main__":
    sys.exit(main())
