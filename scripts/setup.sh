#!/usr/bin/env bash
# Create .venv and install codesearch for contributors: the default install, the torch backends'
# extras (sentence-transformers, static: the suite covers every backend), the test tools and jedi
# (oracle: tests/scripts/test_bench_callgraph.py runs the call-graph benchmark against it).
# Safe to run again. A user's install is lighter: pipx install . (README, scripts/check_install.sh).
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
# editable as a plain .pth line (the checkout on sys.path) rather than setuptools' default import
# hook, which every Python start of this venv imported (pathlib, urllib, ...): `python -c pass`
# took 24 ms of CPU with it, 12 without (measured loaded); the hook where setuptools has no compat
EXTRAS="[test,sentence-transformers,static,oracle,team]"
PYTHONWARNINGS=ignore pip_install -e ".$EXTRAS" --config-settings editable_mode=compat || pip_install -e ".$EXTRAS"
# the editor tests run a real Neovim (Debian's 0.7.2 is the oldest the plugin supports)
if ! command -v nvim >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq neovim) >/dev/null
  else
    echo "setup.sh: nvim is missing; install Neovim (0.7.2 or newer) for the editor tests" >&2
  fi
fi
# bytecode now: where PYTHONDONTWRITEBYTECODE is set (as on these machines) every CLI process
# would otherwise compile the package again (about 20 ms of a 60-ms query through the daemon)
.venv/bin/python -m compileall -q codesearch
echo "codesearch installed in .venv ($(.venv/bin/codesearch --version 2>/dev/null || echo ok))"
