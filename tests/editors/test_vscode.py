"""The VS Code extension, as CI builds it: installed from its lock file, compiled by TypeScript,
its own logic unit-tested with node's test runner, and packaged into a .vsix with vsce. (VS Code
itself cannot be downloaded here; the server it talks to is covered by tests/transports/test_lsp.py.)"""

from __future__ import annotations

import json
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from codesearch.config import CONFIG_FILE_NAME
from codesearch.locations import CATALOG_FILE, INDEX_DIR_NAME

EXTENSION = Path(__file__).resolve().parents[2] / "editors" / "vscode"
NPM = shutil.which("npm")


def npm(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    assert NPM, "npm is not installed (Node.js and npm are needed to build the VS Code extension)"
    return subprocess.run([NPM, *args], cwd=EXTENSION, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def installed():
    if not (EXTENSION / "node_modules" / ".package-lock.json").exists():
        proc = npm("ci", "--no-audit", "--no-fund")
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


def test_compiles_and_its_unit_tests_pass(installed):
    proc = npm("test")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "# fail 0" in proc.stdout and "# pass 7" in proc.stdout


def test_activates_only_where_an_index_is_or_on_its_command():
    """Opening a folder without an index must start no daemon and no index run."""
    manifest = json.loads((EXTENSION / "package.json").read_text())
    index_marker = f"workspaceContains:{INDEX_DIR_NAME}/{CATALOG_FILE}"
    assert manifest["activationEvents"] == [index_marker, f"workspaceContains:{CONFIG_FILE_NAME}",
                                            "onCommand:codesearch.pick"]
    assert manifest["contributes"]["configuration"]["properties"]["codesearch.indexDir"]["type"] == "string"


def test_packages_a_vsix_with_the_language_client(installed):
    proc = npm("run", "package")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    vsix = EXTENSION / "codesearch.vsix"
    with zipfile.ZipFile(vsix) as archive:
        names = set(archive.namelist())
        manifest = json.loads(archive.read("extension/package.json"))
    assert {"extension/out/extension.js", "extension/out/format.js", "extension/out/settings.js",
            "extension.vsixmanifest"} <= names
    assert any(n.startswith("extension/node_modules/vscode-languageclient/") for n in names)
    assert not any(n.startswith("extension/node_modules/typescript/") for n in names)
    assert manifest["contributes"]["commands"][0]["title"] == "Code Search"
