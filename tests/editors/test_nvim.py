"""The Neovim plugin in a real `nvim --headless` (Debian's 0.7.2 here) against a real daemon: the
commands fill the quickfix list, the LSP helper gives call hierarchy through Neovim's own client,
and a missing command or a project without an index gets a message, not a traceback."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from daemon_helpers import REPO_ROOT, SUITE_SETTINGS, Daemon, copy_sample, new_base, seed_repo, seeded_daemon  # noqa: F401

PLUGIN = REPO_ROOT / "editors" / "nvim"
CODESEARCH = str(Path(sys.executable).parent / "codesearch")
NVIM = shutil.which("nvim")
pytestmark = pytest.mark.skipif(NVIM is None, reason="nvim is not installed (scripts/setup.sh installs it)")

PRELUDE = """
local out_path = {out!r}
local messages = {{}}
vim.notify = function(msg, level) table.insert(messages, {{ msg = msg, level = level }}) end
local function finish(data)
  data.messages = messages
  local f = io.open(out_path, "w")
  f:write(vim.json.encode(data))
  f:close()
  vim.cmd("qa!")
end
local function qf()
  local items = {{}}
  for _, it in ipairs(vim.fn.getqflist()) do
    table.insert(items, {{ file = vim.fn.bufname(it.bufnr), lnum = it.lnum, col = it.col, text = it.text }})
  end
  return items
end
local codesearch = require("codesearch")
codesearch.setup({{ cmd = {cmd!r}, timeout_ms = 60000 }})
"""


def run_nvim(tmp_path: Path, cwd: Path, body: str, timeout: float = 300) -> dict:
    """Run `body` (Lua, after PRELUDE) in headless Neovim with the plugin on its runtimepath;
    the body ends by calling finish(table), whose table comes back."""
    out = tmp_path / "out.json"
    script = tmp_path / "script.lua"
    script.write_text(PRELUDE.format(out=str(out), cmd=CODESEARCH) + textwrap.dedent(body))
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODESEARCH_") or k in SUITE_SETTINGS}
    env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run(
        [NVIM, "--headless", "-u", "NONE", "-i", "NONE", "-n", "--cmd", f"set rtp^={PLUGIN}",
         "-c", "runtime plugin/codesearch.lua", "-c", f"luafile {script}"],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert out.exists(), f"nvim wrote nothing: rc={proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    data = json.loads(out.read_text())
    assert "stack traceback" not in proc.stderr and "E5108" not in proc.stderr, proc.stderr
    return data


@pytest.fixture(scope="module")
def served(request, seed_repo):
    return seeded_daemon(request, seed_repo, warm=False)


def test_codesearch_fills_the_quickfix_list(served, tmp_path):
    data = run_nvim(tmp_path, served.root, """
        vim.cmd("edit inventory.py")
        vim.cmd("CodeSearch parse a key value config file")
        vim.wait(60000, function() return #vim.fn.getqflist() > 0 end, 20)
        local search = qf()
        vim.fn.setqflist({}, " ")
        vim.cmd("CodeSearchFiles inventory items")
        vim.wait(60000, function() return #vim.fn.getqflist() > 0 end, 20)
        finish({ search = search, files = qf(), title = vim.fn.getqflist({ title = 1 }).title })
    """)
    first = data["search"][0]
    assert first["file"].endswith("config.py") and first["lnum"] == 8 and first["col"] == 5
    assert first["text"] == "function parse_config — def parse_config(path: str) -> dict:"
    files = [item["file"] for item in data["files"]]
    assert len(files) == len(set(files)) and any(f.endswith("inventory.py") for f in files)
    assert data["title"].startswith("CodeSearchFiles inventory items")  # and says "partial" while vectors come


def test_callers_of_the_word_under_the_cursor(served, tmp_path):
    data = run_nvim(tmp_path, served.root, """
        vim.cmd("edit config.py")
        vim.api.nvim_win_set_cursor(0, { 8, 6 })  -- on parse_config
        vim.cmd("CodeSearchCallers")
        vim.wait(60000, function() return #vim.fn.getqflist() > 0 end, 20)
        local callers = qf()
        vim.fn.setqflist({}, " ")
        vim.cmd("CodeSearchCallees main")
        vim.wait(60000, function() return #vim.fn.getqflist() > 0 end, 20)
        local callees = qf()
        vim.cmd("CodeSearchCallers no_such_function_anywhere")
        vim.wait(10000, function() return #messages > 0 end, 20)
        vim.cmd("CodeSearchStatus")
        vim.wait(10000, function() return #messages > 1 end, 20)
        finish({ callers = callers, callees = callees })
    """)
    assert [(c["file"].endswith("inventory.py"), c["lnum"]) for c in data["callers"]] == [(True, 70)]
    assert data["callers"][0]["text"].startswith("function main — ")
    assert {"parse_config", "compute_backoff"} <= {c["text"].split(" — ")[0].split()[-1] for c in data["callees"]}
    notes = [m["msg"] for m in data["messages"]]
    assert any("no definition named 'no_such_function_anywhere'" in m for m in notes), notes
    assert any("files" in m and "chunks" in m and "embedded" in m for m in notes), notes


def test_the_lsp_helper_gives_call_hierarchy_through_neovims_client(served, tmp_path):
    data = run_nvim(tmp_path, served.root, """
        vim.cmd("edit config.py")
        local id = codesearch.lsp_start()
        local client = vim.lsp.get_client_by_id(id)
        vim.wait(60000, function() return client.initialized end, 20)
        local params = { textDocument = vim.lsp.util.make_text_document_params(),
                         position = { line = 7, character = 6 } }
        local prepared = client.request_sync("textDocument/prepareCallHierarchy", params, 60000, 0)
        local item = prepared.result[1]
        local incoming = client.request_sync("callHierarchy/incomingCalls", { item = item }, 60000, 0)
        local symbols = client.request_sync("workspace/symbol", { query = "clamp" }, 60000, 0)
        finish({ item = item, incoming = incoming.result, symbols = symbols.result })
    """)
    assert data["item"]["name"] == "parse_config"
    assert [(c["from"]["name"], c["fromRanges"][0]["start"]["line"]) for c in data["incoming"]] == [("main", 71)]
    assert data["symbols"][0]["name"] == "clamp"


def test_a_missing_command_gets_a_message(tmp_path):
    repo = copy_sample(tmp_path / "repo")
    data = run_nvim(tmp_path, repo, """
        codesearch.setup({ cmd = "/nonexistent/codesearch" })
        vim.cmd("CodeSearch anything")
        vim.wait(10000, function() return #messages > 0 end, 20)
        finish({})
    """)
    assert any("`/nonexistent/codesearch` command was not found" in m["msg"] for m in data["messages"]), data


def test_a_project_without_an_index_is_indexed_and_answered(tmp_path):
    repo = copy_sample(new_base() / "repo")
    daemon = Daemon(repo)
    try:
        data = run_nvim(tmp_path, repo, """
            vim.cmd("edit config.py")
            vim.cmd("CodeSearch clamp")
            vim.wait(240000, function() return #vim.fn.getqflist() > 0 end, 50)
            finish({ items = qf() })
        """)
    finally:
        daemon.cleanup()
        shutil.rmtree(repo.parent, ignore_errors=True)
    assert any("no index for" in m["msg"] and "building it" in m["msg"] for m in data["messages"]), data
    assert data["items"] and data["items"][0]["text"].startswith("function clamp")
