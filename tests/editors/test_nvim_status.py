"""What the Neovim plugin shows of a daemon's vectors, in a real `nvim --headless`: the daemon's own
share (vectors over the chunks that get one, as its answers use them), whether its model is
loading, and after a partial answer a message once the answers are whole again, without a new
search. The daemon is real, over an index `codesearch index` embedded whole; its model loads when
the test opens the gate (gated_daemon.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from daemon_helpers import REPO_ROOT, SUITE_SETTINGS, seed_repo, seeded_tree  # noqa: F401 - fixtures
from gated_daemon import GatedDaemon

from codesearch.daemon.embedder import MODEL_WAIT_SECONDS

PLUGIN = REPO_ROOT / "editors" / "nvim"
NVIM = shutil.which("nvim")
pytestmark = pytest.mark.skipif(NVIM is None, reason="nvim is not installed (scripts/setup.sh installs it)")

# the plugin's commands, then a marker file once the partial answer is in, then the rest
SCRIPT = """
local messages = {}
vim.notify = function(msg) table.insert(messages, msg) end
local function has(text)
  for _, m in ipairs(messages) do
    if m:find(text, 1, true) then return true end
  end
  return false
end
local codesearch = require("codesearch")
-- index_dir given: the watch finds the socket from it (vim.fn) outside any fast callback
codesearch.setup({ cmd = %(cmd)r, start_daemon = false, timeout_ms = 60000, watch_ms = 200,
  index_dir = vim.fn.getcwd() .. "/.codesearch" })
vim.cmd("CodeSearchStatus")
vim.wait(30000, function() return #messages > 0 end, 20)
local loading = messages[1]
vim.cmd("CodeSearch retry delay with exponential backoff")
vim.wait(60000, function() return #vim.fn.getqflist() > 0 end, 20)
local title = vim.fn.getqflist({ title = 1 }).title
io.open(%(partial)r, "w"):close()
vim.wait(60000, function() return has("vectors ready") end, 20)
vim.cmd("CodeSearchStatus")
vim.wait(30000, function() return has("0 changes pending") and #messages > 3 end, 20)
local f = io.open(%(out)r, "w")
f:write(vim.json.encode({ loading = loading, title = title, messages = messages }))
f:close()
vim.cmd("qa!")
"""


@pytest.fixture
def held(seeded_tree):
    daemon = GatedDaemon(seeded_tree)
    try:
        yield daemon.start().serve()
    finally:
        daemon.close()


def test_status_and_a_partial_answer_show_the_daemons_share_and_are_corrected(held, tmp_path):
    out, partial = tmp_path / "out.json", tmp_path / "partial"
    script = tmp_path / "script.lua"
    script.write_text(textwrap.dedent(SCRIPT) % {"cmd": str(Path(sys.executable).parent / "codesearch"),
                                                "partial": str(partial), "out": str(out)})
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODESEARCH_") or k in SUITE_SETTINGS}
    env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    nvim = subprocess.Popen([NVIM, "--headless", "-u", "NONE", "-i", "NONE", "-n", "--cmd", f"set rtp^={PLUGIN}",
                             "-c", "runtime plugin/codesearch.lua", "-c", f"luafile {script}"],
                            cwd=held.daemon.root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not partial.exists() and nvim.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        held.gate.set()  # the model loads now; Neovim asks nothing more of the daemon than its status
        _, err = nvim.communicate(timeout=120)
    finally:
        if nvim.poll() is None:
            nvim.kill()
    assert out.exists(), err
    assert "stack traceback" not in err and "E5108" not in err, err
    data = json.loads(out.read_text())
    assert "100% embedded, the embedding model is loading" in data["loading"], data
    assert data["title"].endswith("(partial: 100% of chunks have vectors)"), data
    notes = data["messages"]
    assert any(f"did not get ready within {MODEL_WAIT_SECONDS:g} s" in m for m in notes), notes
    assert any("vectors ready (100% embedded)" in m for m in notes), notes
    assert "100% embedded, 0 changes pending" in notes[-1], notes
