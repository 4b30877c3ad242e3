#!/usr/bin/env bash
# Variable-size TRMM, TRSM, potrf_vbatched on the GPU machine: the CUDA instances of the triangular
# suite, then the tester's trsm/trmm/potrf_vbatched (the default configuration and, for TRSM, each
# algorithm; against cublas<t>trsmBatched per distinct size, cuBLAS per problem in 16 streams, cuSOLVER
# potrfBatched per distinct size and our CPU backend). Run from the repository root with the bundle
# unpacked at /tmp/bundle; files go to $OUT/vb-tri/ (gtest.txt, bench.txt, bench.json: the tester's
# JSON, bench.png when matplotlib is there); a short summary is printed last.
#   VBT_PRECISIONS  precisions (default d)               VBT_X  sizes x (default 32,64,128,256,512)
#   VBT_ROUTINES    routines (default trsm_vbatched,trmm_vbatched,potrf_vbatched)
#   VBT_REPEAT      timed GPU runs per row (default 5)
#   VBT_TEST_SECONDS / VBT_BENCH_SECONDS  time limits (default 80 / 90)
#   VBT_FILTER      gtest filter (default: every CUDA instance)
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

timeout "${VBT_BENCH_SECONDS:-90}" "$run" tester --precision "${VBT_PRECISIONS:-d}" \
  --n "${VBT_X:-32,64,128,256,512}" --batch 2000 --routine "${VBT_ROUTINES:-trsm_vbatched,trmm_vbatched,potrf_vbatched}" \
  --repeat "${VBT_REPEAT:-5}" --seed 2017 --ref cublas,cublas-streams,cusolver,cpu --all-variants \
  --json "$out/bench.json" > "$out/bench.txt" 2>&1
bench_rc=$?
python3 libsolver/tests/triangular/plot_bench.py "$out/bench.json" -o "$out/bench.png" > /dev/null 2>&1 || true

echo "== vb-tri on $gpu at $commit"
echo "-- gtest (rc $test_rc):"
grep -E '^\[  (PASSED|FAILED) |Failure|seed [0-9]|Which is|Expected|error|what\(\)' "$out/gtest.txt" | head -40
echo "-- tester trsm/trmm/potrf_vbatched (rc $bench_rc):"
grep -E '^(routine|trsm_|trmm_|potrf_|tester:)' "$out/bench.txt" | tail -60
