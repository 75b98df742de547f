#!/usr/bin/env bash
# Create .venv and install codesearch with its test tools. Safe to run again.
# torch is pinned first: an unpinned torch would pull a CUDA build of several GB.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet "torch==2.13.0"
.venv/bin/python -m pip install --quiet -e ".[test]"
echo "codesearch installed in .venv ($(.venv/bin/codesearch --version 2>/dev/null || echo ok))"
