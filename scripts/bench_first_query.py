"""First run to first answer: `codesearch query` in a copy of a repository that has no index.

Each run copies the tree afresh (untimed), then times whole processes, as a user meets them:
- rg: ripgrep over the same words as the first answer looks for (`rg -i -e WORD ...`, output read
  whole), the floor of any answer from the files; the median of three;
- first: the query that finds no index (answered from ripgrep while the daemon it starts builds
  the index; before that change: the keyword index and graph built in the process first);
- second: the next query, at once (the daemon may still be building: answered from ripgrep);
- warm (with --warm): a query once the daemon's model is loaded.
The daemon is stopped after each run. Run i asks fixture question i (in turn): a question whose
relevant file is known, so that each run also says whether the first answer holds it (in its
top ten). The machine is shared: take several runs, and compare checkouts (--checkout) in turns.

    .venv/bin/python scripts/bench_first_query.py --combine kotlinx-coroutines,cats,alamofire,zod --runs 8
    .venv/bin/python scripts/bench_first_query.py ~/.cache/codesearch-bench/kotlinx-coroutines --runs 5 --warm
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))
from codesearch.eval.bench import DEFAULT_CHECKOUTS
from codesearch.search.early_answer import query_words
from codesearch.search.ripgrep import rg_binary

# (repository, question, the file that answers it), from the benchmark's annotations
FIXTURES = (
    ("kotlinx-coroutines", "how launch and async coroutine builders start coroutines",
     "kotlinx-coroutines-core/common/src/Builders.common.kt"),
    ("alamofire", "how request retrying is implemented with backoff and retry conditions",
     "Source/Features/RetryPolicy.swift"),
    ("cats", "how Validated accumulates errors across independent computations",
     "core/src/main/scala/cats/data/Validated.scala"),
    ("zod", "ZodError structure and issue formatting", "packages/zod/src/v4/core/errors.ts"),
    ("kotlinx-coroutines", "Flow interface and cold stream definition",
     "kotlinx-coroutines-core/common/src/flow/Flow.kt"),
    ("alamofire", "how response validation checks status codes and content types",
     "Source/Features/Validation.swift"),
    ("cats", "how the Functor type class defines mapping over a context", "core/src/main/scala/cats/Functor.scala"),
    ("zod", "JSON Schema to Zod schema conversion", "packages/zod/src/v4/classic/from-json-schema.ts"),
)
SECOND = "retry with exponential backoff"
WARM = ("cancel a coroutine when its parent fails", "retry with exponential backoff", "parse configuration file")
WARM_WAIT_SECONDS = 600.0
RG_TRIES = 3


def environment(runtime: Path, checkout: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODESEARCH_")}
    env.update(CODESEARCH_AUTO_DAEMON="1", CODESEARCH_RUNTIME_DIR=str(runtime), HF_HUB_OFFLINE="1",
               TRANSFORMERS_OFFLINE="1", PYTHONPATH=str(checkout))
    return env


def timed_query(tree: Path, env: dict[str, str], text: str) -> tuple[float, dict]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "codesearch.cli", "query", text, "--json"], cwd=tree, env=env,
                          capture_output=True, text=True, timeout=900)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"query failed ({done.returncode}): {done.stderr.strip()}")
    return seconds, json.loads(done.stdout)


def searched_files(tree: Path) -> int:
    """The files ripgrep searches in the tree (its ignore files applied)."""
    done = subprocess.run([rg_binary(), "--files", "--no-messages"], cwd=tree, capture_output=True, timeout=300)
    return done.stdout.count(b"\n")


def timed_rg(tree: Path, text: str) -> float:
    """ripgrep over the question's words as the first answer looks for them, output read whole."""
    command = [rg_binary(), "--ignore-case", "--line-number", "--no-messages"]
    for word in query_words(text):
        command += ["-e", word.pattern]
    times = []
    for _ in range(RG_TRIES):
        started = time.perf_counter()
        subprocess.run(command, cwd=tree, capture_output=True, timeout=300)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def daemon_status(tree: Path, env: dict[str, str]) -> dict:
    done = subprocess.run([sys.executable, "-m", "codesearch.cli", "daemon", "status", str(tree), "--json"],
                          env=env, capture_output=True, text=True, timeout=60)
    return json.loads(done.stdout) if done.returncode == 0 else {}


def copy_tree(sources: list[Path], tree: Path) -> None:
    """One repository as it is, or several side by side (each in a folder of its name)."""
    skip = shutil.ignore_patterns(".git", ".codesearch")
    if len(sources) == 1:
        shutil.copytree(sources[0], tree, ignore=skip, symlinks=True)
        return
    for source in sources:
        shutil.copytree(source, tree / source.name, ignore=skip, symlinks=True)


def fixtures_of(sources: list[Path]) -> list[tuple[str, str]]:
    """The fixture questions about these repositories, with their files' paths in the tree."""
    names = {s.name for s in sources}
    return [(question, path if len(sources) == 1 else f"{repo}/{path}")
            for repo, question, path in FIXTURES if repo in names]


def one_run(sources: list[Path], scratch: Path, checkout: Path, question: str, relevant: str | None,
            warm: bool) -> dict:
    tree = scratch / "repo"
    copy_tree(sources, tree)
    runtime = scratch / "runtime"
    runtime.mkdir()
    env = environment(runtime, checkout)
    try:
        rg = timed_rg(tree, question)
        first, answer = timed_query(tree, env, question)
        paths = [r["path"] for r in answer["results"][:10]]
        second, _ = timed_query(tree, env, SECOND)
        result = {"question": question, "first": first, "rg": rg, "second": second,
                  "relevant_rank": paths.index(relevant) + 1 if relevant in paths else None,
                  "sources": sorted({name for r in answer["results"] for name in r["sources"]}),
                  "partial": bool(answer.get("partial"))}
        if warm:
            deadline = time.monotonic() + WARM_WAIT_SECONDS
            while not daemon_status(tree, env).get("model_ready") and time.monotonic() < deadline:
                time.sleep(0.5)
            result["warm"] = statistics.median(timed_query(tree, env, q)[0] for q in WARM)
        result["files"] = searched_files(tree)
        return result
    finally:
        subprocess.run([sys.executable, "-m", "codesearch.cli", "daemon", "stop", str(tree)], env=env,
                       capture_output=True, timeout=120)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo", type=Path, nargs="?", help="one repository (else --combine)")
    parser.add_argument("--combine", help="benchmark repositories (by name, under ~/.cache/codesearch-bench) "
                                          "copied side by side into one tree")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--checkout", type=Path, default=REPO_ROOT, help="the codesearch checkout to time")
    parser.add_argument("--warm", action="store_true", help="also time a query once the model is loaded")
    args = parser.parse_args()
    if bool(args.repo) == bool(args.combine):
        parser.error("give a repository or --combine NAMES")
    sources = ([args.repo.expanduser().resolve()] if args.repo
               else [DEFAULT_CHECKOUTS / n for n in args.combine.split(",")])
    fixtures: list[tuple[str, str | None]] = [*fixtures_of(sources)] or [(q, None) for q in WARM]
    runs = []
    for i in range(args.runs):
        question, relevant = fixtures[i % len(fixtures)]
        with tempfile.TemporaryDirectory(prefix="cs-first-") as scratch:
            result = one_run(sources, Path(scratch), args.checkout.resolve(), question, relevant, args.warm)
        runs.append(result)
        warm = f", warm {result['warm']:.3f} s" if "warm" in result else ""
        print(f"run {i + 1}: first {result['first']:.2f} s (rg {result['rg']:.3f} s), second "
              f"{result['second']:.2f} s{warm}; relevant file at {result['relevant_rank']} "
              f"[{question}] ({result['files']} files)", flush=True)
    keys = ["first", "rg", "second", *(["warm"] if args.warm else [])]
    med = {k: round(statistics.median(r[k] for r in runs), 3) for k in keys}
    judged = [r for r in runs if r["question"] in dict(fixtures) and dict(fixtures)[r["question"]]]
    print(json.dumps({"tree": [str(s) for s in sources], "checkout": str(args.checkout), "runs": args.runs,
                      "median_seconds": med, "relevant_in_first_answer": sum(r["relevant_rank"] is not None
                                                                             for r in judged),
                      "judged": len(judged), "all": runs}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
