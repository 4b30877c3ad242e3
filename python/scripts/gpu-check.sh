#!/usr/bin/env bash
# The Python package on the GPU machine: the GPU tests (PyTorch and CuPy) and the side-by-side bench.
#
#   python/scripts/gpu-check.sh [tests|bench|all] [bench arguments...]
#
# Run from the repository root with the lead's bundle unpacked at /tmp/bundle (its lib/ holds
# libbatchsolve). The extension is the bundle's bin/_batchsolve.cpython-312-*.so when the GPU build was
# configured with Python 3.12 (-DPython_EXECUTABLE=...python3.12), else the one built ahead in
# .py-gpu/batchsolve (python/scripts/build-gpu-module.sh); pytest's wheels come from .whl-python/.
# Writes $OUT/python/: pytest.txt, bench.json, bench.md, bench.png; prints a summary last.
# Limits: BENCH_SECONDS (default 100: no new bench case after it), TEST_SECONDS (default 150).
set -uo pipefail
case ${1:-all} in
  tests|bench|all) ;;
  *) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
mode=${1:-all}
(($#)) && shift
out=${OUT:-/tmp/out}/python
mkdir -p "$out"
bundle=${BATCHSOLVE_BUNDLE:-/tmp/bundle}
export LD_LIBRARY_PATH="$bundle/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
site=/tmp/site-python
if ! python3 -c "import pytest" 2>/dev/null && compgen -G ".whl-python/*.whl" >/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target "$site" .whl-python/*.whl
fi
# The extension: the bundle's own when the GPU build was configured with this machine's Python (then
# it matches the bundle's libbatchsolve exactly), else the one built ahead in .py-gpu/.
py_tag=$(python3 -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
package=$PWD/.py-gpu
if [[ -f $bundle/bin/_batchsolve$py_tag ]]; then
  package=/tmp/py-bundle; rm -rf "$package"; mkdir -p "$package/batchsolve"
  cp python/batchsolve/*.py python/batchsolve/*.pyi python/batchsolve/py.typed "$package/batchsolve/" 2>/dev/null
  cp "$bundle/bin/_batchsolve$py_tag" "$package/batchsolve/"
  cp "$bundle/bin/_families$py_tag" "$package/batchsolve/" 2>/dev/null
fi
export PYTHONPATH="$package:$site${PYTHONPATH:+:$PYTHONPATH}"
# .py-gpu carries the libbatchsolve its modules were built with: it goes first.
if [[ -f $package/batchsolve/libbatchsolve.so.0 ]]; then
  export LD_LIBRARY_PATH="$package/batchsolve:$LD_LIBRARY_PATH"
  export BATCHSOLVE_COMMIT=$(cat "$package/batchsolve/COMMIT" 2>/dev/null || echo "${BATCHSOLVE_COMMIT:-}")
fi
export BATCHSOLVE_COMMIT=${BATCHSOLVE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
summary=()

echo "== module: $(ls "$package"/batchsolve/_batchsolve*.so 2>/dev/null)"
ldd "$package"/batchsolve/_batchsolve*.so | grep -E "batchsolve|not found"
if ! python3 -m batchsolve; then
  echo "SUMMARY python: the module does not import (see above)"; exit 1
fi

if [[ $mode == tests || $mode == all ]]; then
  echo "== pytest (GPU tests, then the CPU tests on this machine)"
  start=$SECONDS
  # One line per test (-v), so that a run cut by the time limit still shows what passed.
  timeout "${TEST_SECONDS:-150}" python3 -m pytest -v -rs -p no:cacheprovider --durations=8 python/tests/test_cpu.py \
    python/tests/test_gpu.py > "$out/pytest.txt" 2>&1
  rc=$?
  grep -E "FAILED|ERROR" "$out/pytest.txt" | head -20
  tail -22 "$out/pytest.txt"
  summary+=("pytest rc=$rc in $((SECONDS - start)) s: $(tail -1 "$out/pytest.txt")")
fi

if [[ $mode == bench || $mode == all ]]; then
  echo "== bench"
  start=$SECONDS
  timeout $(( ${BENCH_SECONDS:-100} + 40 )) python3 -m batchsolve.bench --time-limit "${BENCH_SECONDS:-100}" \
    --json "$out/bench.json" --table "$out/bench.md" --plot "$out/bench.png" "$@" 2> "$out/bench-stderr.txt"
  rc=$?
  tail -c 600 "$out/bench-stderr.txt" | tr '\r' '\n' | tail -3
  summary+=("bench rc=$rc in $((SECONDS - start)) s")
  [[ -f $out/bench.json ]] && summary+=("$(python3 -c "import json; print(json.load(open('$out/bench.json'))['summary'])")")
fi

echo "SUMMARY python (commit $BATCHSOLVE_COMMIT):"
printf '  %s\n' "${summary[@]}"
