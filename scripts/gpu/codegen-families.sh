#!/usr/bin/env bash
# The generator families after they moved behind one interface and one kernel cache, on one GPU
# (about 6 minutes): the test binaries whose CUDA cases launch them through the new paths, each under
# its own time limit: batchsolve_vbatched_blas_test (GEMM through jit::family_kernel, the one prelude),
# batchsolve_triangular_test (triangular leaf kernels, the one prelude), batchsolve_large_test (fused
# POTF2 through the kernel cache; captured graphs in the jit::CallCache), batchsolve_ldlt_test (the
# LDL^T leaf launched with LdltFamily's resources) and batchsolve_jit_gpu_test (the interleaved
# Cholesky's per-call cache). Each binary's output goes to $OUT/codegen-families/<binary>.txt; the
# table (binary, rc, passed, failed, skipped, seconds) is printed last.
# Run from the repository root with the bundle unpacked at /tmp/bundle.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}/codegen-families; mkdir -p "$out"
run=/tmp/bundle/run
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$out/gpu.txt" 2>&1
git rev-parse --short HEAD > "$out/commit.txt" 2>/dev/null || echo "${BATCHSOLVE_COMMIT:-unknown}" > "$out/commit.txt"
# binary and its time limit in seconds
cases=("batchsolve_vbatched_blas_test 70" "batchsolve_triangular_test 80" "batchsolve_large_test 80"
       "batchsolve_ldlt_test 80" "batchsolve_jit_gpu_test 80")
table="binary,rc,passed,failed,skipped,seconds"
for c in "${cases[@]}"; do
  read -r bin limit <<< "$c"
  t0=$SECONDS
  timeout -k 5 "$limit" "$run" "$bin" > "$out/$bin.txt" 2>&1
  rc=$?
  passed=$(grep -c '^\[       OK \]' "$out/$bin.txt")
  failed=$(grep -c '^\[  FAILED  \].*(' "$out/$bin.txt")
  skipped=$(grep -c '^\[  SKIPPED \]' "$out/$bin.txt")
  table+=$'\n'"$bin,$rc,$passed,$failed,$skipped,$((SECONDS - t0))"
done
echo "$table" > "$out/summary.csv"
grep -h '^\[  FAILED  \].*(' "$out"/*.txt | head -20
column -s, -t < "$out/summary.csv"
