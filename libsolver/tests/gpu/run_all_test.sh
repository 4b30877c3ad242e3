#!/usr/bin/env bash
# CI test of run-all.sh (no GPU needed): a fake bundle stands in for the GPU machine's programs, so the
# script's warm-up call, test selection, sharding, time limits, summary and exit status are checked
# before a device call depends on them. The fake suites' outcomes are fixed (no timing races): one
# suite passes, one fails a test, one hangs until its shard's time limit (10 s: ample for the fake
# shards that finish, on a loaded machine) kills it.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/run-all-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
failures=0
check() {  # check DESCRIPTION COMMAND...
  if "${@:2}"; then echo "ok: $1"; else echo "FAILED: $1"; failures=$((failures + 1)); fi
}

cat > "$work/run" <<'FAKE'
#!/usr/bin/env bash
# the fake bundle: run NAME ARGS...
name=$1; shift
echo "$name $*" >> "$FAKE_CALLS"
case $name in
  batchsolve-warmup) echo "warm-up of $3 for device 0: 3 kernels (0 already cached, 3 compiled), 0 lines refused, 1.00 s with 4 threads"; exit 0 ;;
  batchsolve_jit_gpu_test|batchsolve_potrf_test|batchsolve_ldlt_test) ;;
  *) exit 127 ;;
esac
if [[ " $* " == *" --gtest_list_tests "* ]]; then
  case $name in
    batchsolve_jit_gpu_test) printf 'InterleavedGpu.\n  PotrfEveryN\n  PotrsEveryN\n  Complex\n  Errors\n' ;;
    batchsolve_potrf_test) printf 'Potrf/0.  # TypeParam = cpu_s\n  Small\nPotrf/4.  # TypeParam = cuda_s\n  Small\n  Large\n' ;;
    batchsolve_ldlt_test) printf 'SysvMixed/0.  # TypeParam = mixed_cpu_d\n  Zero\nSysvMixed/2.  # TypeParam = mixed_cuda_d\n  Zero\n' ;;
  esac
  exit 0
fi
filter=${1#--gtest_filter=}
[[ $filter == *cpu* || $filter == *"/0."* ]] && { echo "a CPU instance was selected: $filter"; exit 3; }
echo "interleaved potrf s lower $((RANDOM % 2 + 4)) 0 {\"nb\":2}" >> "$BATCHSOLVE_KERNEL_MANIFEST"
case $name in
  batchsolve_ldlt_test) exec sleep 120 ;;  # killed by its shard's time limit
  batchsolve_potrf_test)  # shard 0 of 2: Potrf/4.Small fails; shard 1: Potrf/4.Large passes
    if [[ $GTEST_SHARD_INDEX == 0 ]]; then echo "[  FAILED  ] Potrf/4.Small (3 ms)"; exit 1; fi
    echo "[       OK ] Potrf/4.Large (5 ms)" ;;
  batchsolve_jit_gpu_test)  # 4 tests over the shards, each shard says which it ran
    echo "[       OK ] InterleavedGpu.shard$GTEST_SHARD_INDEX-of-$GTEST_TOTAL_SHARDS (1 ms)" ;;
esac
exit 0
FAKE
chmod +x "$work/run"
export FAKE_CALLS=$work/calls
printf 'interleaved potrf s lower 4 0 {"nb":2}\n' > "$work/manifest.txt"

RUN=$work/run OUT=$work/out KERNEL_MANIFEST=$work/manifest.txt SHARD_SECONDS=10 JOBS=4 SHARDS_PER_SUITE=2 \
  bash "$here/run-all.sh" > "$work/console" 2>&1
rc=$?
cat "$work/console"
summary=$work/out/run-all/summary.txt
check "a failing test and a killed shard fail the run" test "$rc" -ne 0
check "the warm-up compiles the manifest's kernels on every thread" \
  grep -qE "^batchsolve-warmup --kernels $work/manifest.txt --threads [0-9]+" "$FAKE_CALLS"
check "CPU instances of typed suites are left out" bash -c "! grep -q 'a CPU instance was selected' '$work/console'"
check "the passing suite: 2 shards, both ran" grep -qE "batchsolve_jit_gpu_test +ok +2 passed, +0 failed" "$summary"
check "... as gtest shards 0 and 1 of 2" test "$(grep -c 'gtest_filter=InterleavedGpu.PotrfEveryN:InterleavedGpu.PotrsEveryN:InterleavedGpu.Complex:InterleavedGpu.Errors' "$FAKE_CALLS")" -eq 2
check "the failing suite is FAILED with 1 failed, 1 passed" grep -qE "batchsolve_potrf_test +FAILED +1 passed, +1 failed" "$summary"
check "the failing test is named" grep -qE '^\[  FAILED  \] Potrf/4.Small' "$summary"
check "the hanging suite's shard timed out" grep -qE "batchsolve_ldlt_test +INCOMPLETE .* 1 timed out" "$summary"
check "suites not in the bundle are listed as such" grep -qE "batchsolve_posv_test +not in the bundle" "$summary"
check "the run's last line counts it all" grep -qE "^run-all: 5 shards .* 3 passed, 1 failed, .* 1 shards timed out" "$work/console"
check "the recorded manifests are merged, one line per kernel" test "$(sort -u "$work/out/run-all/suite-kernels.txt" | wc -l)" -eq "$(wc -l < "$work/out/run-all/suite-kernels.txt")"
check "the logs come back as one archive" tar -tzf "$work/out/run-all/logs.tar.gz" logs/gpu.batchsolve_jit_gpu_test.0.log

: > "$FAKE_CALLS"
RUN=$work/run OUT=$work/out2 KERNEL_MANIFEST=$work/none.txt BUDGET_SECONDS=0 LABELS=gpu bash "$here/run-all.sh" > "$work/console2" 2>&1
rc=$?
check "with no budget nothing runs, and the run fails" test "$rc" -ne 0
check "... every shard reported not run" grep -qE "batchsolve_jit_gpu_test +INCOMPLETE .* 4 not run" "$work/out2/run-all/summary.txt"
check "without a manifest there is no warm-up" bash -c "! grep -q batchsolve-warmup '$FAKE_CALLS'"

# the warm-up in several processes: each a share of the list, together all of it, once
: > "$FAKE_CALLS"
printf 'interleaved potrf s lower %d 0 {"nb":2}\n' 1 2 3 4 5 > "$work/manifest5.txt"
RUN=$work/run OUT=$work/out3 KERNEL_MANIFEST=$work/manifest5.txt WARM_PROCESSES=2 LABELS=gpu SHARD_SECONDS=10 \
  bash "$here/run-all.sh" > "$work/console3" 2>&1
check "WARM_PROCESSES=2: two warm-up processes" test "$(grep -c '^batchsolve-warmup --kernels' "$FAKE_CALLS")" -eq 2
check "... and the warm-up line says so" grep -qE "^warm-up: rc 0 .*2 processes x [0-9]+ threads, 5 kernels listed" "$work/out3/run-all/summary.txt"

((failures == 0)) && echo "run_all_test: all checks passed" || echo "run_all_test: $failures check(s) failed"
exit $((failures > 0))
