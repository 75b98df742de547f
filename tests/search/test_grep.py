"""`codesearch grep` on a copy of the Python sample: every option, the structure and ranking of the
matches, ignore rules, binary files, bad and pathological patterns, non-ASCII text, exit codes."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from conftest import SAMPLES, run_cli
from hypothesis import given
from hypothesis import strategies as st

from codesearch.api.local import LocalService
from codesearch.api.methods import call, call_json
from codesearch.config import load_settings
from codesearch.indexing.index import Index
from codesearch.indexing.indexer import Indexer
from codesearch.search import grep_answer
from codesearch.search.grep import grep as run_grep
from codesearch.search.grep_chunks import place
from codesearch.search.requests import GrepRequest
from codesearch.search.rg_output import RgReader
from codesearch.wire import RequestError


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    root = tmp_path_factory.mktemp("grep") / "repo"
    shutil.copytree(SAMPLES / "python", root, ignore=shutil.ignore_patterns(".codesearch"))
    (root / "unicode.py").write_text("def façade_helper():\n    return 'naïve café'  # café needle\n",
                                     encoding="utf-8")
    (root / "blob.bin").write_bytes(b"clamp here\n\x00\x01clamp again\n")
    (root / "secret").mkdir()
    (root / "secret" / "hidden.py").write_text("clamp = 1\n")
    (root / ".codesearchignore").write_text("secret/\n")
    # odd names and bytes: a line break and a byte that is no UTF-8 in names, CRLF, invalid text
    (root / "new\nline.py").write_text("zebra = 1\n")
    (root / os.fsdecode(b"caf\xe9.py")).write_bytes(b"zebra = '\xff\xfe' # zebra\n")
    (root / "crlf.txt").write_bytes(b"one zebra\r\ntwo\r\nthree zebra\r\n")
    index = Index(root, load_settings(root), create=True)
    Indexer(index).run(embed=False)
    index.close()
    return root


@pytest.fixture(scope="module")
def service(repo):
    index = Index(repo, load_settings(repo))
    yield LocalService(index)
    index.close()


def grep(service, **params) -> dict:
    return call(service, "grep", params)


def lines(answer: dict) -> list[tuple[str, int]]:
    return [(m["path"], m["line"]) for m in answer["matches"]]


def test_matches_come_grouped_by_chunk_definition_first_tests_last(service):
    answer = grep(service, pattern="clamp", word=True, explain=True)
    found = lines(answer)
    assert found[0] == ("config.py", 35)  # def clamp(...)
    assert answer["matches"][0]["chunk"] == {"kind": "function", "name": "clamp", "qualified_name": "clamp",
                                             "start_line": 35, "end_line": 37}
    assert answer["matches"][0]["explain"][0] == "defines clamp"
    first_test = next(i for i, (path, _) in enumerate(found) if path.startswith("tests/"))
    assert all(not path.startswith("tests/") for path, _ in found[:first_test])
    assert all(path.startswith("tests/") for path, _ in found[first_test:])
    assert ("inventory.py", 67) in found  # the use inside compute_backoff
    chunk_of = {(m["path"], m["line"]): m["chunk"]["qualified_name"] for m in answer["matches"]}
    assert chunk_of[("inventory.py", 67)] == "compute_backoff"
    assert {f["path"] for f in answer["files"]} == {path for path, _ in found}
    assert answer["total"] == len(found) and answer["truncated"] is False


def test_path_order_when_asked(service):
    found = lines(grep(service, pattern="clamp", word=True, sort="path"))
    assert found == sorted(found)


def test_fixed_word_and_case(service):
    assert grep(service, pattern="max(", fixed=True)["total"] >= 1  # a regex metacharacter, taken literally
    with pytest.raises(RequestError, match="invalid regular expression"):
        grep(service, pattern="max(")
    assert grep(service, pattern="INVENTORY")["total"] == 0
    assert grep(service, pattern="INVENTORY", ignore_case=True)["total"] > 0
    partial = {m["text"] for m in grep(service, pattern="item")["matches"]}
    whole = {m["text"] for m in grep(service, pattern="item", word=True)["matches"]}
    assert whole < partial and any("items" in t for t in partial - whole)


def test_context_lines_before_and_after(service):
    match = grep(service, pattern="def clamp", before=2, after=1)["matches"][0]
    source = (SAMPLES / "python" / "config.py").read_text().split("\n")
    assert match["before"] == source[32:34] and match["after"] == source[35:36]
    assert match["text"] == source[34]


def test_files_counts_language_and_path_filters(service):
    answer = grep(service, pattern="def ")
    counts = {f["path"]: f["count"] for f in answer["files"]}
    assert counts["config.py"] == 4 and counts["inventory.py"] == 11
    assert {f["path"] for f in grep(service, pattern="def ", filters={"path_glob": "tests/*"})["files"]} == {
        "tests/test_inventory.py"}
    assert grep(service, pattern="Inventory", filters={"language": "markdown"})["files"][0]["path"] == "README.md"
    assert {f["path"] for f in grep(service, pattern="def ", paths=["tests"])["files"]} == {"tests/test_inventory.py"}
    assert grep(service, pattern="def ", limit=2)["truncated"] is True


def test_ignore_rules_binary_files_and_the_index_are_left_out(service):
    paths = {f["path"] for f in grep(service, pattern="clamp")["files"]}
    assert "blob.bin" not in paths  # binary
    assert "secret/hidden.py" not in paths  # .codesearchignore
    assert not any(p.startswith("build/") for p in {f["path"] for f in grep(service, pattern="def")["files"]})
    assert not any(p.startswith(".codesearch") for p in {f["path"] for f in grep(service, pattern="SQLite")["files"]})


def test_non_ascii_lines_report_character_columns(service):
    match = grep(service, pattern="needle")["matches"][0]
    assert match["path"] == "unicode.py" and match["text"] == "    return 'naïve café'  # café needle"
    assert match["text"][match["column"] - 1:].startswith("needle")
    assert grep(service, pattern="façade")["matches"][0]["column"] == 5


@pytest.mark.parametrize("pattern, message", [
    ("(unclosed", "invalid regular expression"),
    (r"\w{1000}{1000}", "size limit"),
])
def test_bad_patterns_get_one_line(service, pattern, message):
    with pytest.raises(RequestError, match=message):
        grep(service, pattern=pattern)


def test_pathological_patterns_finish(service):
    assert grep(service, pattern="(a*)*b")["timing_ms"]["total"] < 5000  # no backtracking engine


def test_paths_outside_the_repository_are_refused(service):
    with pytest.raises(RequestError, match="outside the repository"):
        grep(service, pattern="x", paths=["../"])


@pytest.mark.parametrize("pattern", ["e", "def ", "zzz_nothing_zzz"])
def test_files_and_counts_are_the_whole_answers_files(repo, pattern):
    """-l and -c ask for one match only (their files count every match): the same files, in the
    same order, with the same counts as the whole answer's."""
    whole = json.loads(run_cli("grep", "--json", "--limit", "100000", pattern, "--repo", str(repo),
                               "--no-daemon").stdout)
    files = run_cli("grep", "-l", pattern, "--repo", str(repo), "--no-daemon")
    counts = run_cli("grep", "-c", pattern, "--repo", str(repo), "--no-daemon")
    assert files.stdout.splitlines() == [f["path"] for f in whole["files"]]
    assert counts.stdout.splitlines() == [f"{f['path']}:{f['count']}" for f in whole["files"]]
    assert files.returncode == counts.returncode == (0 if whole["total"] else 1)
    assert pattern == "zzz_nothing_zzz" or len(whole["files"]) > 1


def test_the_command_line(repo):
    done = run_cli("grep", "-w", "clamp", "--repo", str(repo), "--no-daemon")
    assert done.returncode == 0 and done.stdout.startswith("config.py  function clamp\n35:def clamp("), done.stdout
    done = run_cli("grep", "-C", "1", "--vimgrep", "needle", "--repo", str(repo), "--no-daemon")
    assert done.stdout.splitlines() == ["unicode.py:2:33:    return 'naïve café'  # café needle"]
    done = run_cli("grep", "-l", "def ", "tests", "--repo", str(repo), "--no-daemon")
    assert done.stdout.splitlines() == ["tests/test_inventory.py"]
    done = run_cli("grep", "-c", "-F", "max(", "--repo", str(repo), "--no-daemon")
    assert done.stdout.splitlines() == ["config.py:1"]
    answer = json.loads(run_cli("grep", "--json", "clamp", "--repo", str(repo), "--no-daemon").stdout)
    assert set(answer) >= {"pattern", "matches", "timing_ms"}
    assert set(answer["matches"][0]) >= {"path", "line", "column", "text", "chunk", "before", "after"}
    assert run_cli("grep", "zzz_nothing_zzz", "--repo", str(repo), "--no-daemon").returncode == 1
    # -i finds any case; -s makes the search case-sensitive whatever -i says
    assert run_cli("grep", "-i", "-l", "INVENTORY", "--repo", str(repo), "--no-daemon").returncode == 0
    assert run_cli("grep", "-i", "-s", "-l", "INVENTORY", "--repo", str(repo), "--no-daemon").returncode == 1
    bad = run_cli("grep", "(", "--repo", str(repo), "--no-daemon")
    assert bad.returncode == 2 and bad.stderr.strip().count("\n") == 0 and "invalid regular expression" in bad.stderr


def test_odd_names_and_bytes(service):
    answer = grep(service, pattern="zebra", sort="path")
    assert lines(answer) == [("caf\\xe9.py", 1), ("crlf.txt", 1), ("crlf.txt", 3), ("new\\x0aline.py", 1)]
    texts = [m["text"] for m in answer["matches"]]
    assert texts == ["zebra = '\ufffd\ufffd' # zebra", "one zebra", "three zebra", "zebra = 1"]
    assert [m["column"] for m in answer["matches"]] == [1, 5, 7, 1]
    assert answer["matches"][0]["chunk"] and answer["matches"][-1]["chunk"]  # found in the index under their names


@pytest.mark.parametrize("params", [
    {"pattern": "clamp", "word": True, "explain": True},
    {"pattern": "def ", "limit": 7, "before": 2, "after": 1, "explain": True},
    {"pattern": "zebra|café|needle", "sort": "path", "after": 1},
    {"pattern": "item", "ignore_case": True, "filters": {"path_glob": "*.py"}},
    {"pattern": "zzz_nothing_zzz"},
])
def test_the_json_written_without_records_is_the_records_json(service, params, monkeypatch):
    monkeypatch.setattr(grep_answer, "JSON_BLOCK_PIECES", 3)  # many blocks, cut inside lines' pieces
    request = GrepRequest.from_dict({"limit": 100000, **params})
    result = run_grep(service.searcher.grep_facts, service.repository.root, service.repository.dir, request)
    assert result.json() == json.dumps(result.answer().to_dict(), ensure_ascii=False).encode()
    blocks = list(result.json_blocks())
    pieces = len(result.shown) * (3 if request.before or request.after else 2)  # head, chunk[, context]
    assert len(blocks) == 2 + -(-pieces // 3)  # the opening, the lines' blocks, the closing
    served = json.loads(b"".join(call_json(service, "grep", params)))
    assert served["matches"] == grep(service, **params)["matches"]


RG_OUTPUT = (b"a.py\x001:3:x = 1\r\n" b"a.py\x002-context\n" b"--\n"
             b"bin.dat: binary file matches (found \"\\0\" byte around offset 3)\n"
             b"new\nline.py\x007:1:caf\xc3\xa9 x\n" b"b.py\x009:2:\xff x\n")


def test_ripgrep_output_read_in_any_pieces():
    whole = RgReader(0, 1, 100)
    whole.feed(RG_OUTPUT, final=True)
    assert whole.hits.files == ["a.py", "new\\x0aline.py", "b.py"]
    assert (whole.hits.lines, whole.hits.columns) == ([1, 7, 9], [3, 1, 2])
    assert whole.hits.texts() == ["x = 1", "café x", "\ufffd x"]
    assert whole.hits.after == [["context"], [], []]
    for size in (1, 2, 5, 16):
        reader = RgReader(0, 1, 100)
        for start in range(0, len(RG_OUTPUT), size):
            reader.feed(RG_OUTPUT[start:start + size], final=start + size >= len(RG_OUTPUT))
        assert reader.hits == whole.hits, size
    capped = RgReader(0, 1, 2)
    capped.feed(RG_OUTPUT, final=True)
    assert capped.full and capped.hits.lines == [1, 7]


HEADED_OUTPUT = (b"a.py\x001:3:x = 1\r\n" b"4:1:\tq = \"\\\\\"\n" b"\n"
                 b"bin.dat: binary file matches (found \"\\0\" byte around offset 3)\n" b"\n"
                 b"1:2:\nline.py\x007:7:caf\xc3\xa9 x\n" b"\n" b"b.py\x009:2:\xff x\x1b\n" b"10:1:x\n")


def test_headed_ripgrep_output_read_in_any_pieces():
    """ripgrep's --heading form (no context): CRLF, escapes, a binary file's notice, a name with a
    line break (its first line like a record), a column after a non-ASCII character, bytes that
    are not UTF-8, a control character."""
    whole = RgReader(0, 0, 100)
    whole.feed(HEADED_OUTPUT, final=True)
    hits = whole.hits
    assert hits.files == ["a.py", "1:2:\\x0aline.py", "b.py"]  # a name's first line like a record, too
    assert (hits.file_of, hits.lines, hits.columns) == ([0, 0, 1, 2, 2], [1, 4, 7, 9, 10], [3, 1, 6, 2, 1])
    assert hits.texts() == ["x = 1", '\tq = "\\\\"', "café x", "\ufffd x\x1b", "x"]
    assert [json.loads(head + b"null}") for head in hits.heads] == [
        {"path": hits.files[f], "line": n, "column": c, "text": t, "chunk": None}
        for f, n, c, t in zip(hits.file_of, hits.lines, hits.columns, hits.texts())]
    for size in (1, 2, 5, 16, 64):
        reader = RgReader(0, 0, 100)
        for start in range(0, len(HEADED_OUTPUT), size):
            reader.feed(HEADED_OUTPUT[start:start + size], final=start + size >= len(HEADED_OUTPUT))
        assert reader.hits == hits, size
    capped = RgReader(0, 0, 2)
    capped.feed(HEADED_OUTPUT, final=True)
    assert capped.full and capped.hits.lines == [1, 4]


TEXT_BYTES = st.binary(max_size=12).map(lambda b: b.replace(b"\n", b"").replace(b"\0", b""))


@given(st.lists(st.tuples(st.sampled_from([b"a.py", b"d/b \"q\".rs", "é.go".encode(), b"w\\x.c"]),
                          st.lists(st.tuples(st.integers(1, 99), TEXT_BYTES | st.sampled_from(
                              [b"plain", b"t\tab", b'q"uote', b"back\\slash", "caf\u00e9".encode()])),
                                   min_size=1, max_size=4)), min_size=1, max_size=5),
       st.integers(1, 300))
def test_headed_output_in_bulk_or_by_line_gives_what_json_would(files, size):
    """Any files and lines, fed in pieces of any size: each line's head is the JSON of its fields,
    whether its part was read in bulk or a line at a time."""
    output = b"\n".join(name + b"\0" + b"".join(b"%d:1:%b\n" % (n, text) for n, text in lines)
                        for name, lines in files)
    reader = RgReader(0, 0, 1000)
    for start in range(0, len(output), size):
        reader.feed(output[start:start + size], final=start + size >= len(output))
    texts = [text.removesuffix(b"\r").decode("utf-8", errors="replace") for _, lines in files for _, text in lines]
    assert reader.hits.texts() == texts
    assert [json.loads(head + b"null}")["text"] for head in reader.hits.heads] == texts
    assert [reader.hits.files[f] for f in reader.hits.file_of] == [
        os.fsdecode(name).replace("\\", "\\\\") for name, lines in files for _ in lines]


def sweep(bounds, lines):
    """The innermost chunk of each line, the slow way: the last chunk in order holding it."""
    return [next((rid for start, end, rid in reversed(bounds) if start <= line <= end), -1) for line in lines]


@given(st.lists(st.lists(st.tuples(st.integers(1, 40), st.integers(0, 15)), max_size=12), min_size=1, max_size=4),
       st.lists(st.tuples(st.integers(0, 3), st.integers(1, 60)), max_size=30))
def test_placing_by_arrays_agrees_with_a_sweep(files, wanted):
    """Any chunk spans, nested or not: `place` finds what a scan of each file's chunks finds."""
    import numpy as np
    rid = iter(range(10_000))
    bounds = [sorted(((s, s + n, next(rid)) for s, n in chunks), key=lambda b: (b[0], -b[1])) for chunks in files]
    wanted = sorted((f % len(files), line) for f, line in wanted)
    file_of = np.array([f for f, _ in wanted], dtype=np.int64)
    lines = np.array([line for _, line in wanted], dtype=np.int64)
    arrays = [np.array(b, dtype=np.int64).reshape(-1, 3) for b in bounds]
    expected = [sweep(bounds[f], [line])[0] for f, line in wanted]
    for steps in (0, 1, 2, 5):  # the short cut's steps back, then the exact search for what is left
        assert place(file_of, lines, arrays, steps).tolist() == expected, steps
