#!/usr/bin/env bash
# Default CI's hardening step (.ci/run): every committed fuzz corpus (data/fuzz/corpus/*,
# apps/*/fuzz/corpus/*) replayed once under AddressSanitizer + UndefinedBehaviorSanitizer.
#
#   scripts/sanitize-replay.sh [BUILD_DIR]   (default build-replay)
#
# Builds the `fuzz` preset (clang, ASan + UBSan, no CUDA, no Python extension) but only the fuzz
# targets (`fuzzers`: the readers and their harnesses, and what they link), then runs each target's
# fuzz.<name>.replay CTest: every committed input once; any sanitizer report, crash, hang (60 s per
# input) or leak-free abort fails it. No new fuzzing here: scripts/sanitize-cpu.sh does bounded
# fuzzing (BATCHSOLVE_CI_SANITIZE=quick|full).
# Prints the build and replay times and a one-line summary last; exit 1 when a replay fails, and
# also when the number of replay tests differs from the number of corpus folders (a reader whose
# target stopped being registered would otherwise drop out silently).
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-replay}
jobs=${JOBS:-$(nproc)}
if ! command -v clang++ >/dev/null; then
  echo "sanitize-replay: clang++ is missing (scripts/setup.sh installs clang)"; exit 1
fi
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
mkdir -p "$build"
t0=$(date +%s)
cmake --preset fuzz -B "$build" "${launcher[@]}" -DBATCHSOLVE_PYTHON=OFF >"$build/configure.log" 2>&1 ||
  { tail -20 "$build/configure.log"; echo "sanitize-replay: configure failed"; exit 1; }
cmake --build "$build" -j"$jobs" --target fuzzers >"$build/build.log" 2>&1 ||
  { grep -E "error|Error" "$build/build.log" | head -20; echo "sanitize-replay: build failed"; exit 1; }
t1=$(date +%s)
ctest --test-dir "$build" -j"$jobs" -L fuzz -R '\.replay$' --timeout 600 --output-on-failure \
  >"$build/ctest-replay.log" 2>&1
status=$?
t2=$(date +%s)

corpora=$(find data/fuzz/corpus apps/*/fuzz/corpus -mindepth 1 -maxdepth 1 -type d | wc -l)
inputs=$(find data/fuzz/corpus apps/*/fuzz/corpus -type f | wc -l)
replays=$(ctest --test-dir "$build" -N -L fuzz -R '\.replay$' | grep -c 'Test *#')
if grep -q "The following tests FAILED" "$build/ctest-replay.log"; then
  sed -n '/The following tests FAILED/,$p' "$build/ctest-replay.log" | head -20
fi
if ((replays != corpora)); then
  echo "sanitize-replay: $replays replay tests for $corpora corpus folders (a fuzz target is not registered)"
  status=1
fi
echo "sanitize-replay: build $((t1 - t0)) s, replay $((t2 - t1)) s; $corpora corpora, $inputs inputs"
# ctest's own closing line last (CI reads it)
grep -E 'tests passed|tests failed' "$build/ctest-replay.log" | tail -1 || echo "sanitize-replay: ctest printed no summary"
exit $status
