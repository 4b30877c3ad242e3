#!/usr/bin/env bash
# The GPU checks of issue 21's library work (families declared once, the one kernel cache, warm-up,
# first-call cost, workspace), on the GPU machine from the repository root with the bundle at
# /tmp/bundle; results under $OUT/arch-core/, a short summary last. About 3 minutes.
#   libsolver/scripts/gpu-check.sh [OLD_FIRST_CALL]
# OLD_FIRST_CALL: an older build's batchsolve_first_call (with its libbatchsolve beside it, e.g.
# .fc-base/batchsolve_first_call) measured after this one on the same machine. DIAG=1 adds one cold
# first call of each build under strace with BATCHSOLVE_CACHE_REPORT=1 (files opened, where the time went).
#   1) first-call table (s, d x column_major, interleaved x n = 8, 32, 128; potrf, batch 16384: cold,
#      cached, cuSOLVER), this build and OLD_FIRST_CALL;
#   2) batchsolve-warmup's round trip (a second process finds every kernel on disk);
#   3) suites: workspace, config, cuda_backend_smoke, layout, ldlt, first_call's GPU instances (the
#      every-size tests left out: the library's shards run them), 90 s budget.
set -uo pipefail
old=${1:-}
o=${OUT:-/tmp/out}/arch-core; mkdir -p "$o"
status=0
libsolver/scripts/first-call.sh --label arch-core/new > "$o/first-call-new.txt" 2>&1 || status=1
if [[ -n $old ]]; then
  libsolver/scripts/first-call.sh --label arch-core/old --no-vendor "$old" > "$o/first-call-old.txt" 2>&1 || status=1
fi
if [[ ${DIAG:-0} == 1 ]]; then
  diag() {  # label, program...
    local label=$1; shift
    local cache; cache=$(mktemp -d /tmp/diag-cache.XXXX)
    { echo "== $label"
      BATCHSOLVE_CACHE_DIR=$cache BATCHSOLVE_CACHE_REPORT=1 strace -f -e trace=openat -o "$o/strace-$label.txt" \
        "$@" --routine potrf --precision s --layout column_major --n 32 --batch 16384 2>&1 | tail -n 3
      echo "cache folder afterwards:"; ls -la "$cache"
      grep -E "cubin|cache|nvrtc|batchsolve" "$o/strace-$label.txt" | grep -v ENOENT | awk '{$1=""; print}' |
        sort | uniq -c | sort -rn | head -n 25
    } >> "$o/diag.txt" 2>&1
    gzip -f "$o/strace-$label.txt"; rm -rf "$cache"
  }
  diag new /tmp/bundle/run batchsolve_first_call
  [[ -n $old ]] && LD_LIBRARY_PATH="$(cd "$(dirname "$old")" && pwd)" diag old "$old"
fi
bash tools/warmup/roundtrip.sh /tmp/bundle/run batchsolve-warmup > "$o/warmup.txt" 2>&1 || status=1
SUITES="batchsolve_workspace_test batchsolve_config_test batchsolve_cuda_backend_smoke_test batchsolve_layout_test batchsolve_ldlt_test" \
  GPU_TESTS_BUDGET_S=${SUITES_S:-90} TEST_TIMEOUT=75 OUT="$o/suites" \
  bash scripts/on-gpu.sh gpu-tests --gtest_filter=-*EverySize* > "$o/suites.txt" 2>&1 || status=1
echo "===== arch-core summary (status $status)"
tail -n 15 "$o/first-call-new.txt"
[[ -f $o/first-call-old.txt ]] && tail -n 2 "$o/first-call-old.txt"
[[ -f $o/diag.txt ]] && head -n 60 "$o/diag.txt"
tail -n 2 "$o/warmup.txt"
grep -E "^=== gpu-tests|^--- |skipped" "$o/suites.txt" | head -n 20
exit $status
