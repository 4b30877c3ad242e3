#!/usr/bin/env bash
# CI test of scripts/on-gpu.sh's gpu-tests and sweep steps (no GPU needed): a fake bundle stands in
# for the GPU machine's executables. A mistake in these steps costs device time, which is scarce
# (a session has 30 minutes), so their logic is checked here first.
#   gpu-tests: the CPU-backend instances of typed suites are left out, the every-size tests start
#     first, GPU_TESTS_BUDGET_S = 0 reports every test "not run" with a non-zero status, and the logs
#     come back as one archive;
#   sweep: the first call starts the tuner in the background and returns while it runs, with the
#     progress file and the logs so far; a later call waits for the end and reports its exit status.
#     The fake tuner ends when the test says so (a gate file), never on a timer: the test cannot
#     flake on a loaded machine (ctest -j2 beside builds).
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
check() {  # check DESCRIPTION COMMAND...
  if "${@:2}"; then echo "ok: $1"; else echo "FAILED: $1"; failures=$((failures + 1)); fi
}

mkdir -p "$work/bundle"
cat > "$work/bundle/run" <<'FAKE'
#!/usr/bin/env bash
# the fake bundle: "run NAME ARGS..."
name=$1; shift
if [[ $name == autotune ]]; then
  # One progress line and log line, then three more once the test opens the gate ($FAKE_GATE exists):
  # the test decides when the "tuner" ends, so no timing on a loaded machine can reorder the steps
  # (it used to sleep 2 s between lines, and the first call's 5 s wait raced with its 6 s; issue 22).
  while (($#)); do case $1 in --resume) progress=$2; shift;; --log) log=$2; shift;; esac; shift; done
  echo '{"case": 1}' >> "$progress"; echo "{}" >> "$log"
  for ((tenths = 0; tenths < 1200; tenths++)); do [[ -e $FAKE_GATE ]] && break; sleep 0.1; done
  for i in 2 3 4; do echo "{\"case\": $i}" >> "$progress"; echo "{}" >> "$log"; done
  echo "autotune: 4 entries in table.json"
  exit "${FAKE_TUNER_RC:-0}"
fi
case " $* " in
  *" --gtest_list_tests "*)
    printf 'Posv/0.  # TypeParam = cpu_s\n  EmptyBatches\n  EverySizeEveryLayout\n'
    printf 'Posv/4.  # TypeParam = cuda_s\n  EmptyBatches\n  EverySizeEveryLayout\n'
    printf 'CoopGpu.\n  BadConfigurationsNameTheirField\n' ;;
  *) echo "[  PASSED  ] 1 test." ;;
esac
FAKE
chmod +x "$work/bundle/run"
export BATCHSOLVE_BUNDLE_DIR=$work/bundle BATCHSOLVE_SWEEP_DIR=$work/sweep BATCHSOLVE_COMMIT=test
export FAKE_GATE=$work/gate  # the fake tuner finishes once this file exists
export SUITES=batchsolve_posv_test
on_gpu() {  # on_gpu OUT_DIR ARGS...: the step's console output in OUT_DIR/console, its status returned
  local out=$1; shift
  mkdir -p "$out"
  OUT=$out "$repo/scripts/on-gpu.sh" "$@" > "$out/console" 2>&1
}

# ---- gpu-tests -------------------------------------------------------------------------------------
on_gpu "$work/t1" gpu-tests; rc=$?
mkdir -p "$work/t1/logs" && tar -xzf "$work/t1/gpu-test-logs.tar.gz" -C "$work/t1/logs"
check "gpu-tests passes when every test passes" test "$rc" -eq 0
check "gpu-tests leaves out the CPU-backend instances" \
  test "$(cut -d' ' -f2 "$work/t1/logs/gpu-tests.list" | tr '\n' ' ')" = "Posv/4.EverySizeEveryLayout Posv/4.EmptyBatches CoopGpu.BadConfigurationsNameTheirField "
check "gpu-tests reports 3 passed" grep -q "=== gpu-tests: 3 tests: 3 passed" "$work/t1/console"
check "gpu-tests returns one archive of the logs" test "$(ls "$work/t1" | grep -c '\.log$')" -eq 0
check "... with every test's log in it" test "$(ls "$work/t1/logs" | grep -c '^batchsolve_posv_test\..*\.log$')" -eq 3

GPU_TESTS_BUDGET_S=0 on_gpu "$work/t2" gpu-tests; rc=$?
check "gpu-tests with no budget left fails" test "$rc" -ne 0
check "gpu-tests with no budget left runs nothing" grep -q "0 passed, 0 timed out .* 3 not run" "$work/t2/console"

# ---- sweep -----------------------------------------------------------------------------------------
on_gpu "$work/s1" sweep 1; rc=$?
check "sweep starts the tuner and returns while it runs" grep -q "sweep: still running" "$work/s1/console"
check "sweep brings back the progress file so far" test -s "$work/s1/progress.jsonl"
touch "$FAKE_GATE"  # the tuner may end now
on_gpu "$work/s2" sweep 60; rc=$?
check "a later call waits for the end" grep -q "sweep: ended, exit status 0" "$work/s2/console"
check "the ended sweep passes" test "$rc" -eq 0
check "the whole progress file comes back" test "$(wc -l < "$work/s2/progress.jsonl")" -eq 4
check "the candidate log comes back compressed" test -s "$(ls "$work"/s2/candidates-*.jsonl.xz)"

rm -rf "$work/sweep"
FAKE_TUNER_RC=2 on_gpu "$work/s3" sweep 60; rc=$?
check "a tuner that fails fails the step" test "$rc" -ne 0
check "... and says so" grep -q "sweep: ended, exit status 2" "$work/s3/console"

((failures == 0)) && echo "test_on_gpu: all checks passed" || echo "test_on_gpu: $failures check(s) failed"
exit $((failures > 0))
