#!/usr/bin/env bash
# The tester beside cuSolverDx on one H200 (--ref cusolverdx, validation/README.md "Peers"): potrf and
# posv, s and d, column-major and interleaved, batch 16384, at DX_NS (default 8,32,128: a smoke run of
# about 15 s; the full set 4,8,...,128 takes about 60 s), bench_cusolverdx found beside the tester in
# the bundle (list .gpu-bundle/cusolverdx/bench_cusolverdx, built by validation/cusolverdx/build-peer.sh,
# in the request's extra_files) or at $BATCHSOLVE_CUSOLVERDX. Within TOPIC_BUDGET_S (default 30 s): the
# peer gets at most a third of it. Writes $OUT/tester-dx/{dx.json, targets.json, dx.log, gpu.txt,
# commit.txt} (targets: validation/cusolverdx/targets.json, judged by the tester); the rows last.
# Run from the repository root with the bundle unpacked at /tmp/bundle (BUNDLE_RUN: another `run`).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}/tester-dx; mkdir -p "$out"
budget=${TOPIC_BUDGET_S:-30}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > "$out/gpu.txt" 2>&1
git rev-parse --short HEAD > "$out/commit.txt" 2>/dev/null || echo "${BATCHSOLVE_COMMIT:-unknown}" > "$out/commit.txt"
export BATCHSOLVE_CACHE_DIR=${BATCHSOLVE_CACHE_DIR:-/tmp/batchsolve-cache}; mkdir -p "$BATCHSOLVE_CACHE_DIR"
timeout -k 5 $(( budget - 3 )) "${BUNDLE_RUN:-/tmp/bundle/run}" tester --routine potrf,posv --precision s,d \
  --layout column_major,interleaved --n "${DX_NS:-8,32,128}" --batch "${DX_BATCH:-16384}" --distinct 512 \
  --backend cuda --ref cusolverdx --cusolverdx-seconds $(( budget / 3 )) --repeat 7 --warmup 1 --jobs 16 \
  --targets validation/cusolverdx/targets.json --targets-out "$out/targets.json" --json "$out/dx.json" > "$out/dx.log" 2>&1
rc=$?
grep -E '^(GPU|cuSolverDx peer|tester:|targets:)' "$out/dx.log"
grep -E "^(routine|potrf|posv) " "$out/dx.log"
echo "tester-dx: rc $rc"
exit $rc
