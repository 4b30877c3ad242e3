#!/usr/bin/env bash
# The LDL^T solvers on the GPU machine: the ldlt GoogleTest suite's CUDA instances, then the tester's
# sytrf_nopiv and sysv_mixed (ours against cuSOLVER getrf/sytrf and the IRS solvers; the TF32 variant
# too). Run from the repository root with the bundle unpacked at /tmp/bundle; files go to $OUT/ldlt/
# (gtest.txt, sysv_bench.json: the tester's JSON, sysv_bench.txt, sysv_bench.png when matplotlib is
# there); a short summary is printed last.
#   LDLT_SIZES   orders for the benchmark (default 2048,4096,10424,15135)
#   LDLT_REPEAT  timed runs per row after a warm-up (default 3)
#   LDLT_BENCH_SECONDS / LDLT_TEST_SECONDS  time limits (default 300 / 90; with the BEM run at most 7.5 minutes)
#   LDLT_BEM_MESH  a real BEM matrix for the bench, assembled by the bem app on the GPU (P0, soft
#                  scattering, k = 4): mesh spec (default ico:4, n = 5120; empty: none)
#   LDLT_BEM_SECONDS  time limit of that bem run (default 60)
#   LDLT_ONLY      comma-separated bench rows to run (default: all)
set -u
out="${OUT:-/tmp/out}/ldlt"
mkdir -p "$out"
run=/tmp/bundle/run
sizes=${LDLT_SIZES:-2048,4096,10424,15135}
repeat=${LDLT_REPEAT:-3}
commit=$(git rev-parse --short HEAD 2>/dev/null || echo "${BATCHSOLVE_COMMIT:-unknown}")
export BATCHSOLVE_COMMIT=$commit
gpu=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -1)

# CUDA instances of the typed suites: Ldlt/4-7 = cuda_s, cuda_d, cuda_c, cuda_z; SysvMixed/2-3 = cuda_d, cuda_z.
filter='Ldlt/4.*:Ldlt/5.*:Ldlt/6.*:Ldlt/7.*:SysvMixed/2.*:SysvMixed/3.*'
timeout "${LDLT_TEST_SECONDS:-90}" "$run" batchsolve_ldlt_test --gtest_filter="$filter" > "$out/gtest.txt" 2>&1
test_rc=$?

matrix_args=()
bem_mesh=${LDLT_BEM_MESH-ico:4}
if [[ -n $bem_mesh && -x /tmp/bundle/bin/bem ]]; then
  rm -rf /tmp/ldlt_bem && mkdir -p /tmp/ldlt_bem
  if timeout "${LDLT_BEM_SECONDS:-60}" "$run" bem solve --mesh "$bem_mesh" -k 4 --assembly gpu --solver gpu-lu \
       --write-matrix /tmp/ldlt_bem/A.h5 -o /tmp/ldlt_bem/out > /tmp/ldlt_bem/bem.txt 2>&1; then
    matrix_args+=(--matrix /tmp/ldlt_bem/A.h5)
  else
    echo "bem solve --mesh $bem_mesh failed; the bench runs without a BEM matrix:"; tail -5 /tmp/ldlt_bem/bem.txt
  fi
fi

timeout "${LDLT_BENCH_SECONDS:-300}" "$run" tester --routine sytrf_nopiv,sysv_mixed --n "$sizes" --repeat "$repeat" \
  --seed 2025 --ref cusolver --all-variants "${matrix_args[@]}" --json "$out/sysv_bench.json" > "$out/sysv_bench.txt" 2>&1
bench_rc=$?
python3 libsolver/tests/ldlt/plot_sysv_bench.py "$out/sysv_bench.json" -o "$out/sysv_bench.png" > /dev/null 2>&1 || true

echo "== ldlt on $gpu at $commit"
echo "-- gtest (rc $test_rc):"
grep -E '^\[  (PASSED|FAILED|SKIPPED) |Failure|seed [0-9]' "$out/gtest.txt" | head -40
echo "-- tester sytrf_nopiv, sysv_mixed (rc $bench_rc):"
grep -vE '^$' "$out/sysv_bench.txt" | tail -60
