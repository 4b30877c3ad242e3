#!/usr/bin/env bash
# Runs on the GPU machine, in the repository root, with .gpu-bundle carried there. Writes logs and
# JSON under $OUT (the device tool brings them back); commit what matters under results/.
#   scripts/on-gpu.sh tests [gtest-filter]      every GoogleTest executable of the bundle
#   scripts/on-gpu.sh gpu-tests [gtest args]    only the suites that use the GPU, each time-bounded
#   scripts/on-gpu.sh tester ARGS...            the tester with ARGS (JSON to $OUT/tester.json)
#   scripts/on-gpu.sh baseline                  the cuSOLVER-vs-LAPACK baseline table (issue 2)
#   scripts/on-gpu.sh autotune ARGS...          the autotuner (validation/autotune.cpp)
# Several steps can be chained: scripts/on-gpu.sh tests -- baseline
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/out}; mkdir -p "$out"
bundle=/tmp/bundle
[[ -x $bundle/run ]] || tar -xJf .gpu-bundle/bundle.tar.xz -C /tmp || exit 1
# NVRTC's compiled kernels persist between calls of the device tool (each starts a bare machine)
# when the previous call's $OUT/jit-cache.tar.xz is carried back as .jit-cache/jit-cache.tar.xz.
export BATCHSOLVE_CACHE_DIR=/tmp/batchsolve-cache
mkdir -p "$BATCHSOLVE_CACHE_DIR"
[[ -f .jit-cache/jit-cache.tar.xz ]] && tar -xJf .jit-cache/jit-cache.tar.xz -C "$BATCHSOLVE_CACHE_DIR"
save_cache() { tar -C "$BATCHSOLVE_CACHE_DIR" -cf - . | xz -T0 -3 > "$out/jit-cache.tar.xz"; }
trap save_cache EXIT
export BATCHSOLVE_COMMIT=${BATCHSOLVE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee "$out/gpu.txt"

status=0
while (($#)); do
  step=$1; shift
  args=(); while (($#)) && [[ $1 != -- ]]; do args+=("$1"); shift; done
  (($#)) && shift  # the --
  case $step in
    gpu-tests)
      # The suites that exercise the GPU (the no-GPU codegen/emulation suites already ran in CI), each
      # bounded by TEST_TIMEOUT seconds so that one slow suite cannot eat the whole call.
      for t in batchsolve_column_major_gpu_test batchsolve_jit_gpu_test batchsolve_cuda_backend_smoke_test \
               batchsolve_potrf_test batchsolve_potrs_test batchsolve_posv_test batchsolve_layout_test; do
        echo "=== $t"
        timeout "${TEST_TIMEOUT:-300}" "$bundle/run" "$t" --gtest_brief=1 "${args[@]}" 2>&1 | tail -n 60 | tee -a "$out/gpu-tests.log"
        rc=${PIPESTATUS[0]}; echo "=== $t rc=$rc" | tee -a "$out/gpu-tests.log"; ((status |= rc))
      done ;;
    tests)
      "$bundle/run-tests" "${args[@]}" 2>&1 | tee "$out/tests.log"; ((status |= PIPESTATUS[0])) ;;
    tester)
      "$bundle/run" tester "${args[@]}" --json "$out/tester.json" 2>&1 | tee "$out/tester.log"; ((status |= PIPESTATUS[0])) ;;
    autotune)
      "$bundle/run" autotune "${args[@]}" 2>&1 | tee "$out/autotune.log"; ((status |= PIPESTATUS[0])) ;;
    baseline)
      "$bundle/run" tester --routine potrf --precision s,d --n 4:128:4 --batch 16384 --layout column_major \
        --backend cuda --check --ref cusolver,lapack --json "$out/baseline.json" 2>&1 | tee "$out/baseline.log"
      ((status |= PIPESTATUS[0])) ;;
    *) echo "on-gpu: unknown step '$step'" >&2; exit 2 ;;
  esac
done
exit $status
