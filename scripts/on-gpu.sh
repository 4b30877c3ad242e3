#!/usr/bin/env bash
# Runs on the GPU machine, in the repository root, with .gpu-bundle carried there. Writes logs and
# JSON under $OUT (the device tool brings them back); commit what matters under results/.
#   scripts/on-gpu.sh tests [gtest-filter]      every GoogleTest executable of the bundle
#   scripts/on-gpu.sh tester ARGS...            the tester with ARGS (JSON to $OUT/tester.json)
#   scripts/on-gpu.sh baseline                  the cuSOLVER-vs-LAPACK baseline table (issue 2)
# Several steps can be chained: scripts/on-gpu.sh tests -- baseline
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/out}; mkdir -p "$out"
bundle=/tmp/bundle
[[ -x $bundle/run ]] || tar -xJf .gpu-bundle/bundle.tar.xz -C /tmp || exit 1
export BATCHSOLVE_CACHE_DIR=/tmp/batchsolve-cache
export BATCHSOLVE_COMMIT=${BATCHSOLVE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee "$out/gpu.txt"

status=0
while (($#)); do
  step=$1; shift
  args=(); while (($#)) && [[ $1 != -- ]]; do args+=("$1"); shift; done
  (($#)) && shift  # the --
  case $step in
    tests)
      "$bundle/run-tests" "${args[@]}" 2>&1 | tee "$out/tests.log"; ((status |= PIPESTATUS[0])) ;;
    tester)
      "$bundle/run" tester "${args[@]}" --json "$out/tester.json" 2>&1 | tee "$out/tester.log"; ((status |= PIPESTATUS[0])) ;;
    baseline)
      "$bundle/run" tester --routine potrf --precision s,d --n 4:128:4 --batch 16384 --layout column_major \
        --backend cuda --check --ref cusolver,lapack --json "$out/baseline.json" 2>&1 | tee "$out/baseline.log"
      ((status |= PIPESTATUS[0])) ;;
    *) echo "on-gpu: unknown step '$step'" >&2; exit 2 ;;
  esac
done
exit $status
