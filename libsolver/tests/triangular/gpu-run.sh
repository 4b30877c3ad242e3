#!/usr/bin/env bash
# Issue 27 (variable-size TRMM, TRSM, potrf_vbatched) on the GPU machine: the CUDA instances of the
# triangular suite, then vbatched_triangular_bench (ours against cuBLAS in 16 streams, cuSOLVER
# potrfBatched per distinct size, the fixed-size potrf_batched and the CPU reference). Run from the
# repository root with the bundle unpacked at /tmp/bundle; files go to $OUT/vb-tri/ (gtest.txt,
# bench.txt, bench.json, bench.md, bench.png when matplotlib is there); a short summary is printed last.
#   VBT_PRECISIONS  bench precisions (default d)        VBT_X  sizes x (default 32,64,128,256,512)
#   VBT_ROUTINES    bench routines (default trsm_square,trsm_chol,trmm,potrf)
#   VBT_REPEAT      timed GPU runs per row (default 5)   VBT_CPU_REPEAT  CPU runs per row (default 1)
#   VBT_TEST_SECONDS / VBT_BENCH_SECONDS  time limits (default 80 / 90)
#   VBT_FILTER      gtest filter (default: every CUDA instance)
#   VBT_BLOCKINGS   extra leaf blockings to time, columns:warps pairs (e.g. 4:4,2:8; default none)
#   VBT_INVERSION_BLOCKS  extra nb of the inversion-based TRSM to time (e.g. 16; default none)
set -u
out="${OUT:-/tmp/out}/vb-tri"
mkdir -p "$out"
run=/tmp/bundle/run
commit=$(git rev-parse --short HEAD 2>/dev/null || echo "${BATCHSOLVE_COMMIT:-unknown}")
export BATCHSOLVE_COMMIT=$commit
gpu=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -1)
# a kernel cache of this run only (each kernel's first call compiles it: part of the test time)
export BATCHSOLVE_CACHE_DIR=${BATCHSOLVE_CACHE_DIR:-/tmp/vb-tri-cache}

# VbatchedTriangular/4-7 are the CUDA instances (cuda_s, cuda_d, cuda_c, cuda_z).
filter=${VBT_FILTER:-'VbatchedTriangular/4.*:VbatchedTriangular/5.*:VbatchedTriangular/6.*:VbatchedTriangular/7.*'}
timeout "${VBT_TEST_SECONDS:-80}" "$run" batchsolve_triangular_test --gtest_filter="$filter" > "$out/gtest.txt" 2>&1
test_rc=$?

timeout "${VBT_BENCH_SECONDS:-90}" "$run" vbatched_triangular_bench --precision "${VBT_PRECISIONS:-d}" \
  --x "${VBT_X:-32,64,128,256,512}" --routines "${VBT_ROUTINES:-trsm_square,trsm_chol,trmm,potrf}" \
  --repeat "${VBT_REPEAT:-5}" --cpu-repeat "${VBT_CPU_REPEAT:-1}" ${VBT_BLOCKINGS:+--blockings "$VBT_BLOCKINGS"} \
  ${VBT_INVERSION_BLOCKS:+--inversion-blocks "$VBT_INVERSION_BLOCKS"} \
  --json "$out/bench.json" --markdown "$out/bench.md" > "$out/bench.txt" 2>&1
bench_rc=$?
python3 libsolver/tests/triangular/plot_bench.py "$out/bench.json" -o "$out/bench.png" > /dev/null 2>&1 || true

echo "== vb-tri on $gpu at $commit"
echo "-- gtest (rc $test_rc):"
grep -E '^\[  (PASSED|FAILED) |Failure|seed [0-9]|Which is|Expected|error|what\(\)' "$out/gtest.txt" | head -40
echo "-- vbatched_triangular_bench (rc $bench_rc):"
grep -vE '^ ' "$out/bench.txt" | grep -E 'error|fail|terminate|what' | head -5
if grep -q '^summary' "$out/bench.txt"; then
  sed -n '/^summary/,$p' "$out/bench.txt"
else  # cut short (time limit): the rows measured so far
  tail -40 "$out/bench.txt"
fi
