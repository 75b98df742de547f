"""Red team: what a client may read or search. A folder swapped for a link to a place outside the
repository while `read`, `grep` and the indexer open files, private folders and ignored secrets
reached through globs and explicit paths, a FIFO, a regex that backtracks, a glob that matches
nothing. Each test reproduces a defect found by probing; the real stack throughout.

The race runs RACE_SECONDS (3 s; CODESEARCH_RACE_SECONDS=600 for the ten-minute probe)."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

import pytest
from conftest import run_cli

from codesearch.api.local import LocalService
from codesearch.api.methods import call
from codesearch.config import load_settings
from codesearch.indexing.index import Index
from codesearch.indexing.indexer import Indexer
from codesearch.ingest.extract import SkipFile, read_source
from codesearch.wire import RequestError

RACE_SECONDS = float(os.environ.get("CODESEARCH_RACE_SECONDS", "3"))
MARKER = "OUTSIDE_SECRET_7f3a"  # what the file outside the repository holds
FILES_IN_SUB = 20
FLIPS_BETWEEN_RESTS = 100
REST_SECONDS = 0.005


def build(root: Path) -> None:
    index = Index(root, load_settings(root), create=True)
    Indexer(index).run(embed=False)
    index.close()


@pytest.fixture()
def repo(tmp_path):
    """A repository with a folder `sub` that the swapper turns into a link to `outside` and back."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "passwd").write_text(f"root:x:0:0:{MARKER}:/root:/bin/bash\n" * 50)
    root = tmp_path / "repo"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "passwd").write_text("def harmless():\n    return 'root inside'\n" * 25)
    (root / "main.py").write_text("def main():\n    return 'root'\n")
    (root / "link").symlink_to(outside, target_is_directory=True)  # the swapper's spare link
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    build(root)
    return root


class Swapper:
    """Flips repo/sub between its real folder and a link to the outside folder, as fast as it can."""

    def __init__(self, root: Path):
        self.root, self.stop, self.flips = root, threading.Event(), 0
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        sub, spare, link = self.root / "sub", self.root / "sub.real", self.root / "link"
        while not self.stop.is_set():
            os.rename(sub, spare)  # the folder steps aside
            os.rename(link, sub)  # the link takes its name
            os.rename(sub, link)
            os.rename(spare, sub)
            self.flips += 1
            if self.flips % FLIPS_BETWEEN_RESTS == 0:
                time.sleep(REST_SECONDS)  # the folder in place for a while: reads get through too

    def __enter__(self) -> Swapper:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()


def leaks(answer: object) -> bool:
    return MARKER in repr(answer)


def test_read_and_grep_never_read_through_a_swapped_folder(repo):
    """Before: /etc/passwd came back 47 times (read) and 57 times (grep) in 30 s. A client thread
    for each request, all beside the swapper."""
    index = Index(repo, load_settings(repo))
    service = LocalService(index)
    leaked: list[str] = []
    noted: list[str] = []  # answers that say files were left out because their folders changed
    answered: dict[str, int] = {}
    deadline = time.monotonic() + RACE_SECONDS

    def client(method: str, params: dict) -> None:
        key = f"{method} {params}"
        answered[key] = 0
        while time.monotonic() < deadline:
            try:
                answer = call(service, method, params)
            except RequestError:
                continue
            answered[key] += 1
            if leaks(answer):
                leaked.append(key)
            if "left out" in answer.get("note", ""):
                noted.append(key)

    clients = [threading.Thread(target=client, args=request) for request in (
        ("read", {"path": "sub/passwd"}),
        ("grep", {"pattern": "root"}),
        ("grep", {"pattern": "root", "paths": ["sub"]}),
        ("grep", {"pattern": "root", "before": 1}))]
    try:
        with Swapper(repo) as swapper:
            for thread in clients:
                thread.start()
            for thread in clients:
                thread.join()
    finally:
        index.close()
    print(f"race: {swapper.flips} flips, answers {answered}, {len(leaked)} leaks")
    assert swapper.flips > 100
    assert all(answered.values())
    assert leaked == []
    assert noted


def test_indexer_never_takes_in_a_file_through_a_swapped_folder(repo, tmp_path):
    """The files in `sub` change on every run (through hard links from outside the repository, so
    nothing writes through the swapped name), and each run reads them again by name."""
    outside = tmp_path / "outside"
    aliases = []
    for i in range(FILES_IN_SUB):
        (outside / f"f{i}.py").write_text(f"secret = '{MARKER}'\n" * 20)
        (repo / "sub" / f"f{i}.py").write_text("def harmless():\n    return 'root'\n")
        aliases.append(tmp_path / f"alias{i}")
        os.link(repo / "sub" / f"f{i}.py", aliases[-1])
    taken_in: list[dict] = []
    deadline = time.monotonic() + RACE_SECONDS
    with Swapper(repo):
        while time.monotonic() < deadline:
            for alias in aliases:
                alias.write_text(f"def harmless():\n    return {time.monotonic_ns()}\n")
            build(repo)
            taken_in += keyword_search(repo, MARKER)  # after every run: the next may read the file again
    build(repo)  # the folder in its place again
    assert len(keyword_search(repo, "harmless")) >= FILES_IN_SUB
    assert taken_in == []


def keyword_search(root: Path, query: str) -> list[dict]:
    index = Index(root, load_settings(root))
    try:
        return call(LocalService(index), "search", {"query": query, "mode": "keyword", "limit": 50})["results"]
    finally:
        index.close()


def test_read_source_of_a_walked_file_refuses_a_folder_become_a_link(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a.py").write_text(f"x = '{MARKER}'\n")
    root = tmp_path / "repo"
    root.mkdir()
    (root / "pkg").symlink_to(outside, target_is_directory=True)
    with pytest.raises(SkipFile) as info:
        read_source(root / "pkg" / "a.py", load_settings(root), "python", walked=True)
    assert info.value.reason == "outside_root"


@pytest.fixture()
def private_repo(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "remote", "add", "origin", "https://user:TOKEN_abc@example.invalid/r.git"],
                   check=True)
    (root / "vendor" / "lib" / ".git").mkdir(parents=True)
    (root / "vendor" / "lib" / ".git" / "config").write_text("url = https://TOKEN_abc@example.invalid\n")
    (root / "vendor" / "lib" / "code.py").write_text("def lib():\n    return 'TOKEN_abc is not here'\n")
    (root / ".gitignore").write_text(".env\nkeys/\n")
    (root / ".env").write_text("API_KEY=TOKEN_abc\n")
    (root / ".env.example").write_text("API_KEY=TOKEN_abc placeholder\n")
    (root / "keys").mkdir()
    (root / "keys" / "server.pem").write_text("TOKEN_abc private key\n")
    (root / "app.py").write_text("def app():\n    return 'TOKEN_abc used here'\n")
    build(root)
    (root / ".codesearch" / "daemon.log").write_text("TOKEN_abc in a log\n")
    return root


@pytest.fixture()
def private_service(private_repo):
    index = Index(private_repo, load_settings(private_repo))
    yield LocalService(index)
    index.close()


def grep_paths(service, **params) -> set[str]:
    return {f["path"] for f in call(service, "grep", {"pattern": "TOKEN_abc", **params})["files"]}


@pytest.mark.parametrize("glob", [None, "**", "*", "**/*", ".*", "**/.git/**", ".codesearch/*", ".env"])
def test_grep_keeps_out_private_folders_and_ignored_secrets_whatever_the_glob(private_service, glob):
    """Before: `path_glob: "**"` returned .git/config (a remote with a token), the daemon's log and
    a nested repository's .git/config."""
    found = grep_paths(private_service, **({"filters": {"path_glob": glob}} if glob else {}))
    assert found <= {"app.py", "vendor/lib/code.py", ".env.example"}
    if glob in (None, "**", "*", "**/*"):
        assert {"app.py", "vendor/lib/code.py"} <= found


@pytest.mark.parametrize("path", [".git/config", ".git", "vendor/lib/.git/config", "vendor/lib/.git",
                                  ".codesearch/daemon.log", ".codesearch", ".env", "keys/server.pem"])
def test_grep_refuses_private_paths_named_explicitly(private_service, path):
    with pytest.raises(RequestError, match="cannot be searched"):
        call(private_service, "grep", {"pattern": "TOKEN_abc", "paths": [path]})


@pytest.mark.parametrize("path", [".git/config", "vendor/lib/.git/config", ".codesearch/daemon.log", ".env",
                                  "keys/server.pem", "./vendor/../.git/config"])
def test_read_refuses_private_paths(private_service, path):
    """Before: `read` served vendor/lib/.git/config."""
    with pytest.raises(RequestError, match="cannot be read"):
        call(private_service, "read", {"path": path})


def test_committed_files_that_look_like_secrets_stay_readable(private_service):
    """Only ignored secrets are private: a committed .env.example is part of the repository."""
    assert "placeholder" in call(private_service, "read", {"path": ".env.example"})["text"]


def test_read_of_a_fifo_says_what_it_is_without_blocking(private_repo, private_service):
    os.mkfifo(private_repo / "pipe.py")
    started = time.monotonic()
    with pytest.raises(RequestError, match=r"pipe\.py is a FIFO"):
        call(private_service, "read", {"path": "pipe.py"})
    assert time.monotonic() - started < 5


def test_a_backtracking_regex_does_not_hold_the_process(tmp_path):
    """Before: `([a-z_]+)*\\(` against a 30-character snake_case definition name backtracked in
    Python's `re` for minutes, holding the GIL (the daemon stopped answering)."""
    root = tmp_path / "repo"
    root.mkdir()
    name = "a_rather_long_snake_case_name_x"
    (root / "m.py").write_text(f"def {name}():\n    return 1\n\n{name}()\n")
    build(root)
    index = Index(root, load_settings(root))
    started = time.monotonic()
    try:
        answer = call(LocalService(index), "grep", {"pattern": r"([a-z_]+)*\(", "limit": 10})
    finally:
        index.close()
    assert time.monotonic() - started < 10
    assert answer["matches"] and answer["matches"][0]["line"] == 1  # the definition's own line first


def test_a_glob_that_matches_no_file_is_no_match_not_an_error(private_repo):
    """Before: `grep --path 'none*'` said "ripgrep failed" with exit 2."""
    result = run_cli("grep", "TOKEN_abc", "--path", "none*", "--repo", str(private_repo), "--no-daemon")
    assert result.returncode == 1, result.stderr
    assert result.stderr.count("\n") == 1 and "--path 'none*' matches no file" in result.stderr  # a note, no error


def test_a_missing_path_is_one_clear_error(private_service):
    with pytest.raises(RequestError, match=r"nothere\.py does not exist"):
        call(private_service, "grep", {"pattern": "x", "paths": ["nothere.py"]})


def test_a_file_named_in_its_escaped_form_is_searched(tmp_path):
    """A name that is no UTF-8 reaches clients as `\\xNN`; given back in that form it is the file."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / os.fsdecode(b"caf\xe9.py")).write_text("needle = 1\n")
    build(root)
    index = Index(root, load_settings(root))
    try:
        answer = call(LocalService(index), "grep", {"pattern": "needle", "paths": ["caf\\xe9.py"]})
    finally:
        index.close()
    assert [m["path"] for m in answer["matches"]] == ["caf\\xe9.py"]
