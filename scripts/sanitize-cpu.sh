#!/usr/bin/env bash
# The CPU side of issue 22's sanitizer runs, as CI runs it (scripts/setup.sh test):
#
#   scripts/sanitize-cpu.sh [--quick] [BUILD_DIR]   (default build-fuzz: the `fuzz` preset's folder)
#
# --quick leaves out the library's test suites (their typed tests are most of the build time): the
# data/ suites, bsolve and the fuzz targets only, for a CI that cannot spend the full run's time.
#
# Builds the `fuzz` preset (clang, AddressSanitizer + UndefinedBehaviorSanitizer on every object, no
# CUDA), then runs under the sanitizers:
#   * the CPU test suites of the library (potrf, potrs, posv, layouts, generators, accuracy; their CPU
#     instances; the every-size sweeps are left to the ordinary build, where they take minutes already)
#     and of data/ (batch files, the typed HDF5 layer, input checks, the bsolve command);
#   * every fuzz target's CTests: the committed corpus replayed, then FUZZ_SECONDS (default 20) of
#     fuzzing each (scripts/sanitize-fuzz.sh: fails on a failure in our own code).
# Any sanitizer report fails the test it occurs in. Prints the time of each phase and a summary last.
set -uo pipefail
cd "$(dirname "$0")/.."
quick=0
if [[ ${1:-} == --quick ]]; then quick=1; shift; fi
build=${1:-build-fuzz}
jobs=${JOBS:-$(nproc)}
t0=$(date +%s)
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
if ! command -v clang++ >/dev/null; then
  echo "sanitize-cpu: clang++ is missing (scripts/setup.sh installs clang)"; exit 1
fi
cmake --preset fuzz -B "$build" "${launcher[@]}" -DBATCHSOLVE_FUZZ_SECONDS="${FUZZ_SECONDS:-20}" >"$build.configure.log" 2>&1 ||
  { tail -20 "$build.configure.log"; echo "sanitize-cpu: configure failed"; exit 1; }
suites=(test_batch_file test_hdf5 test_input_checks bsolve fuzzers)
((quick)) || suites+=(batchsolve_potrf_test batchsolve_potrs_test batchsolve_posv_test batchsolve_layout_test
                      batchsolve_generate_test batchsolve_accuracy_test)
cmake --build "$build" -j"$jobs" --target "${suites[@]}" >"$build/build.log" 2>&1 ||
  { grep -E "error|Error" "$build/build.log" | head -20; echo "sanitize-cpu: build failed"; exit 1; }
t1=$(date +%s)

# Leaks are checked in our own suites; HDF5's free lists live until exit and are released by H5close.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/scripts/sanitize-lsan.supp}
# CPU instances only (no CUDA in this build; the CUDA instances would only print "skipped"), and
# not the every-size sweeps (minutes each under ASan; the ordinary build runs them).
status=0
if ((quick)); then
  echo "100% tests passed, 0 tests failed out of 0 (--quick: not run)" >"$build/ctest-libsolver.log"
else
  ctest --test-dir "$build" -j"$jobs" -L libsolver -E 'EverySize|cuda_|consumer' --timeout 600 \
    --output-on-failure >"$build/ctest-libsolver.log" 2>&1 || status=1
fi
ctest --test-dir "$build" -j"$jobs" -R '^(Hdf5|RoundTrip|ProbeInChild|CheckedSize|BufferSize|NonFiniteInput|Batch|Solution|Malformed|bsolve_cli)' \
  --timeout 600 --output-on-failure >"$build/ctest-data.log" 2>&1 || status=1
t2=$(date +%s)
# CI bounds: 5 s per input before it counts as a hang, at most 10 failing inputs replayed per target.
SANITIZE_FUZZ_TIMEOUT=${SANITIZE_FUZZ_TIMEOUT:-5} SANITIZE_FUZZ_MAX_REPLAYS=${SANITIZE_FUZZ_MAX_REPLAYS:-10} \
  ctest --test-dir "$build" -j"$jobs" -L fuzz --timeout 900 --output-on-failure >"$build/ctest-fuzz.log" 2>&1 || status=1
t3=$(date +%s)

summary() { grep -E "tests passed|tests failed" "$1" | tail -1; }
for log in "$build"/ctest-{libsolver,data,fuzz}.log; do
  if grep -q "The following tests FAILED" "$log"; then sed -n '/The following tests FAILED/,$p' "$log" | head -20; fi
done
grep -h "^fuzz " "$build"/ctest-fuzz.log "$build"/Testing/Temporary/LastTest.log 2>/dev/null | sort -u
echo "sanitize-cpu: build $((t1 - t0)) s, CPU suites $((t2 - t1)) s, fuzz $((t3 - t2)) s"
echo "sanitize-cpu: libsolver: $(summary "$build/ctest-libsolver.log")"
echo "sanitize-cpu: data:      $(summary "$build/ctest-data.log")"
echo "sanitize-cpu: fuzz:      $(summary "$build/ctest-fuzz.log")"
exit $status
