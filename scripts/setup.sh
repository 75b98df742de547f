#!/usr/bin/env bash
# Create .venv and install codesearch with its test tools. Safe to run again.
# torch is pinned first: an unpinned torch would pull a CUDA build of several GB.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
pip_install() {  # quiet, and without the noise of package index locations missing on this machine
  .venv/bin/python -m pip install --quiet "$@" 2> >(grep -v "^WARNING: Location" >&2)
}
pip_install --upgrade pip
pip_install "torch==2.13.0"
pip_install -e ".[test]"
# bytecode now: where PYTHONDONTWRITEBYTECODE is set (as on these machines) every CLI process
# would otherwise compile the package again (about 20 ms of a 60-ms query through the daemon)
.venv/bin/python -m compileall -q codesearch
echo "codesearch installed in .venv ($(.venv/bin/codesearch --version 2>/dev/null || echo ok))"
