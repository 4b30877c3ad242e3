#!/usr/bin/env bash
# Issue 27 (variable-size BLAS-3, GEMM side) on the GPU machine: the CUDA instances of the blas3 test
# suite, then the tester's gemm/syrk/syr2k/symm_vbatched (ours against cuBLAS grouped GEMM, cuBLAS in 16
# streams and the CPU backend) and, when asked, the GEMM/SYRK tuning sweep (tester --sweep). Run from the
# repository root with the bundle unpacked at /tmp/bundle; five files go to $OUT/vb-gemm/: gtest.txt,
# bench.txt (the tester's console, sweep included), bench.json, sweep.json (the tester's JSON),
# bench.png (when matplotlib is there); a short summary last.
#   VB_PRECISIONS  every routine in these (default d,z)
#   VB_ROUTINES    routines (default: all four)          VB_X   sizes x (default 32,64,128,256,512)
#   VB_CPU_MAX     CPU rows up to this x (default 128)   VB_REPEAT  timed calls per row (default 3)
#   VB_SWEEP       precisions to sweep GEMM/SYRK configurations for (default: none), at VB_SWEEP_X (default 64,256),
#                  for VB_SWEEP_ROUTINES (default gemm_vbatched,syrk_vbatched)
#   VB_TEST_SECONDS / VB_BENCH_SECONDS / VB_SWEEP_SECONDS  time limits (default 60 / 90 / 50)
set -u
out="${OUT:-/tmp/out}/vb-gemm"
mkdir -p "$out"
run=${VB_RUN:-/tmp/bundle/run}  # VB_RUN: another launcher (a local dry run)
commit=$(git rev-parse --short HEAD 2>/dev/null || echo "${BATCHSOLVE_COMMIT:-unknown}")
export BATCHSOLVE_COMMIT=${BATCHSOLVE_COMMIT:-$commit}
gpu=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -1)
# a kernel cache of this run only (the first call of each kernel compiles it: part of the test time)
export BATCHSOLVE_CACHE_DIR=${BATCHSOLVE_CACHE_DIR:-/tmp/vb-gemm-cache}

# VbatchedBlas/4-7 are the CUDA instances (cuda_s, cuda_d, cuda_c, cuda_z).
timeout "${VB_TEST_SECONDS:-60}" "$run" batchsolve_vbatched_blas_test \
  --gtest_filter='VbatchedBlas/4.*:VbatchedBlas/5.*:VbatchedBlas/6.*:VbatchedBlas/7.*' > "$out/gtest.txt" 2>&1
test_rc=$?

timeout "${VB_BENCH_SECONDS:-90}" "$run" tester --precision "${VB_PRECISIONS:-d,z}" \
  --routine "${VB_ROUTINES:-gemm_vbatched,syrk_vbatched,syr2k_vbatched,symm_vbatched}" \
  --n "${VB_X:-32,64,128,256,512}" --batch 2000 --cpu-max-x "${VB_CPU_MAX:-128}" --repeat "${VB_REPEAT:-3}" \
  --ref cublas-grouped,cublas,cpu --json "$out/bench.json" > "$out/bench.txt" 2>&1
bench_rc=$?

sweep_rc=-
if [[ -n ${VB_SWEEP:-} ]]; then
  timeout "${VB_SWEEP_SECONDS:-50}" "$run" tester --sweep --precision "$VB_SWEEP" --n "${VB_SWEEP_X:-64,256}" \
    --batch 2000 --routine "${VB_SWEEP_ROUTINES:-gemm_vbatched,syrk_vbatched}" --setups gemm,syrk \
    --repeat 3 --json "$out/sweep.json" >> "$out/bench.txt" 2>&1
  sweep_rc=$?
fi
python3 validation/vbatched/plot_vbatched.py "$out/bench.json" -o "$out/bench.png" > /dev/null 2>&1 || true

echo "== vb-gemm on $gpu at $BATCHSOLVE_COMMIT"
echo "-- gtest (rc $test_rc):"
grep -E '^\[  (PASSED|FAILED|SKIPPED) |Failure|seed [0-9]|got ' "$out/gtest.txt" | head -30
echo "-- tester *_vbatched (rc $bench_rc):"
grep -E '^(routine|gemm_|syrk_|syr2k_|symm_|tester:)' "$out/bench.txt" | grep -v ' {' | tail -60
if [[ $sweep_rc != - ]]; then
  echo "-- sweep (rc $sweep_rc): the fastest configurations"
  grep -E '^(gemm|syrk)_vbatched' "$out/bench.txt" | grep ' {' | sort -k7,7gr | head -24
fi
