"""`codesearch merge` as a whole process: JSON in, JSON out; bad input is one line and exit 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT

LISTS = [{"source": "docs", "results": [{"id": "a", "title": "A"}, {"id": "b"}]},
         {"source": "memory", "results": [{"id": "x"}, {"id": "y"}, {"id": "a", "title": "A again"}]}]


def merge_cli(stdin: str, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODESEARCH_")}
    env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "codesearch.cli", "merge", *args], input=stdin, env=env,
                          capture_output=True, text=True, timeout=60, cwd=REPO_ROOT)


def test_merge_prints_the_contract():
    done = merge_cli(json.dumps(LISTS), "--boost-sources=docs:1.2,memory:0.8", "--limit", "3")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert set(answer) == {"merged_results", "count", "boosts", "timing_ms"}
    assert answer["count"] == 3 and answer["boosts"] == {"docs": 1.2, "memory": 0.8}
    top = answer["merged_results"][0]
    assert (top["id"], top["title"], top["source"]) == ("a", "A", "docs")
    assert top["fused_score"] == pytest.approx(1 / 60 + 1 / 62)
    assert top["boosted_score"] == pytest.approx((1 / 60 + 1 / 62) * 1.2)
    assert [s["rank"] for s in top["sources"]] == [0, 2]


def test_merge_k():
    answer = json.loads(merge_cli(json.dumps(LISTS), "--k", "1").stdout)
    assert answer["merged_results"][0]["fused_score"] == pytest.approx(1 / 1 + 1 / 3)


@pytest.mark.parametrize(("stdin", "args", "words"), [
    ("", (), "empty"),
    ("{not json", (), "not JSON"),
    ('{"source": "a", "results": []}', (), "JSON array"),
    ('[{"source": "a", "results": [{"title": "no id"}]}]', (), "no \"id\""),
    ("[]", ("--boost-sources=docs",), "bad boost"),
    ("[]", ("--boost-sources=docs:high",), "bad boost"),
    ("[]", ("--boost-sources=docs:-0.5",), "bad boost"),
    ("[]", ("--k", "zero"), "--k"),
    ("[]", ("--k", "0"), "--k"),
    ("[]", ("--limit", "0"), "--limit"),
    ("[]", ("--limit", "1.5"), "--limit"),
])
def test_bad_input_is_one_line_and_exit_2(stdin, args, words):
    done = merge_cli(stdin, *args)
    assert done.returncode == 2, done
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("codesearch: ") and words in lines[0], done.stderr
