#!/usr/bin/env bash
# A user's install, checked end to end: the wheel built from this checkout goes into a fresh venv
# in a temp folder (packages from the index only), which then indexes sample_repos/python, answers
# a query with vectors and runs `codesearch doctor`. Fails when torch or an nvidia package came in,
# or the venv outgrows MAX_VENV_MB; prints the install time and the venv's size.
# PIP_NO_CACHE_DIR=1 measures an install with a cold pip cache.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
MAX_VENV_MB=${MAX_VENV_MB:-1100}
work=$(mktemp -d "${TMPDIR:-/tmp}/codesearch-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
quiet_pip() {  # without the noise of package index locations missing on this machine
  "$@" --quiet 2> >(grep -v "^WARNING: Location" >&2)
}

quiet_pip "$PYTHON" -m pip wheel --no-deps --wheel-dir "$work/dist" .
wheel=$(ls "$work"/dist/codesearch-*.whl)
"$PYTHON" -m venv "$work/venv"
started=$(date +%s%N)
quiet_pip "$work/venv/bin/python" -m pip install "$wheel"
elapsed_ms=$(( ($(date +%s%N) - started) / 1000000 ))
echo "check_install: $(basename "$wheel") installed in $((elapsed_ms / 1000)).$(printf %03d $((elapsed_ms % 1000))) s"

unwanted=$("$work/venv/bin/python" -m pip list --format=freeze 2>/dev/null \
  | grep -iE '^(torch|triton|nvidia-|transformers|sentence-transformers|model2vec)' || true)
if [ -n "$unwanted" ]; then
  echo "check_install: the default install brought packages it never uses:" $unwanted >&2
  exit 1
fi
size_mb=$(du -sm "$work/venv" | cut -f1)
echo "check_install: venv $size_mb MB (at most $MAX_VENV_MB), $("$work/venv/bin/python" -m pip list 2>/dev/null \
  | tail -n +3 | wc -l) packages, no torch or nvidia package"
if [ "$size_mb" -gt "$MAX_VENV_MB" ]; then
  echo "check_install: the venv is larger than $MAX_VENV_MB MB" >&2
  exit 1
fi

cp -r sample_repos/python "$work/repo"
export HF_HUB_OFFLINE=1 ANONYMIZED_TELEMETRY=False
codesearch="$work/venv/bin/codesearch"
(cd "$work/repo" && "$codesearch" index . >/dev/null)
answer=$(cd "$work/repo" && "$codesearch" query --no-daemon --json "parse the config file")
"$work/venv/bin/python" - "$answer" <<'PY'
import json, sys
results = json.loads(sys.argv[1])["results"]
with_vectors = [r for r in results if "vector" in r["sources"]]
if not with_vectors:
    sys.exit("check_install: the query was answered without vectors")
first = results[0]
print(f"check_install: query answered, {len(with_vectors)} of {len(results)} results from vectors, "
      f"first {first['path']}:{first['start_line']}")
PY
(cd "$work/repo" && "$codesearch" doctor .) || { echo "check_install: codesearch doctor found a problem" >&2; exit 1; }
echo "check_install: ok"
