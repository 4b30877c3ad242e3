#!/usr/bin/env bash
# The large-matrix Cholesky on the GPU machine: the suite's CUDA instances, then the tester's
# potrf_large and posv_mixed (ours against cusolverDnXpotrf and FP64 potrf + potrs, GEMM rate, LAPACK
# and our CPU backend on the host, time split). Run from the repository root with the bundle unpacked
# at /tmp/bundle; files go to $OUT/large/ (gtest.txt, large_bench.json: the tester's JSON,
# large_bench.txt, large_bench.png when matplotlib is there, sweep.txt/sweep.json with LARGE_SWEEP);
# a short summary is printed last.
#   LARGE_SIZES      orders of the comparison (default 1024,2048,4096,8192,16384,32768)
#   LARGE_PRECISION  d, s or d,s (default d,s)
#   LARGE_REPEAT     timed runs per row after a warm-up (default 3)
#   LARGE_SWEEP      orders of the nb/ib/variant/depth sweep (default none: no sweep), precisions
#                    LARGE_SWEEP_PRECISION (default d,s)
#   LARGE_BENCH      1: run the comparison (default 1)
#   LARGE_TESTS      1: run the GoogleTest suite first (default 1)
#   LARGE_TEST_SECONDS / LARGE_BENCH_SECONDS / LARGE_SWEEP_SECONDS  limits (default 100 / 150 / 150)
set -u
out="${OUT:-/tmp/out}/large"
mkdir -p "$out"
run=${LARGE_RUN:-/tmp/bundle/run}  # LARGE_RUN: another launcher (a local dry run)
commit=$(git rev-parse --short HEAD 2>/dev/null || echo "${BATCHSOLVE_COMMIT:-unknown}")
export BATCHSOLVE_COMMIT=${BATCHSOLVE_COMMIT:-$commit}
gpu=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -1)

test_rc=skipped
if [[ ${LARGE_TESTS:-1} == 1 ]]; then
  # CUDA instances: LargeCholesky/2-3 = cuda_s, cuda_d; PosvMixed/1 = cuda_d; the NVRTC compile suite.
  timeout "${LARGE_TEST_SECONDS:-100}" "$run" batchsolve_large_test \
    --gtest_filter='LargeCholesky/2.*:LargeCholesky/3.*:PosvMixed/1.*' > "$out/gtest.txt" 2>&1
  test_rc=$?
fi

sweep_rc=skipped
if [[ -n ${LARGE_SWEEP:-} ]]; then
  timeout "${LARGE_SWEEP_SECONDS:-150}" "$run" tester --routine potrf_large --sweep --n "$LARGE_SWEEP" \
    --precision "${LARGE_SWEEP_PRECISION:-d,s}" --repeat 1 --ref cusolver --json "$out/sweep.json" > "$out/sweep.txt" 2>&1
  sweep_rc=$?
fi

bench_rc=skipped
if [[ ${LARGE_BENCH:-1} == 1 ]]; then
  timeout "${LARGE_BENCH_SECONDS:-150}" "$run" tester --routine potrf_large,posv_mixed \
    --n "${LARGE_SIZES:-1024,2048,4096,8192,16384,32768}" --precision "${LARGE_PRECISION:-d,s}" \
    --repeat "${LARGE_REPEAT:-3}" --ref cusolver,lapack,cpu --all-variants --split \
    --json "$out/large_bench.json" > "$out/large_bench.txt" 2>&1
  bench_rc=$?
  python3 libsolver/tests/large/plot_large_bench.py "$out/large_bench.json" -o "$out/large_bench.png" > /dev/null 2>&1 || true
fi

echo "== large (issue 28) on $gpu at $commit"
echo "-- gtest (rc $test_rc):"
if [[ -f $out/gtest.txt ]]; then
  echo "$(grep -c '^\[       OK \]' "$out/gtest.txt") ok, $(grep -c '^\[  SKIPPED \] .*ms)' "$out/gtest.txt") skipped, $(grep -c '^\[  FAILED  \] .*ms)' "$out/gtest.txt") failed"
  grep -E '^\[  FAILED  \] .*ms\)|: Failure$|Expected|Which is|actual:|seed [0-9]|what\(\)|LAPACK.s' "$out/gtest.txt" | head -40
fi
echo "-- sweep (rc $sweep_rc):"
[[ -f $out/sweep.txt ]] && grep -E '^potrf_large|^routine' "$out/sweep.txt" | sort -k6,6g | head -60
echo "-- tester potrf_large, posv_mixed (rc $bench_rc):"
[[ -f $out/large_bench.txt ]] && grep -vE '^$' "$out/large_bench.txt" | tail -45
