#!/usr/bin/env bash
# The tester beside cuSolverDx and cuSOLVER on one H200 (--ref cusolver,cusolverdx, validation/README.md
# "Peers"): potrf and posv (1 rhs), s and d, batch DX_BATCH (16384), layouts DX_LAYOUTS (column_major),
# n = DX_NS (4,8,12,16,24,32,48,64,80,100,128). Every row is timed in cuSolverDx's scope (one input set
# restored and the L2 flushed before each call), and cuSolverDx's benchmark runs as the tester's child
# process, so the ratios are like for like. Carried in .carry/tester-dx/ (scripts/gpu/tester-dx-prebuild.sh):
# bench_cusolverdx (else the one beside the tester, or $BATCHSOLVE_CUSOLVERDX) and prebuilt.tar (the
# cases' sm_90 kernels, so the call spends no time in NVRTC; without it the kernels compile there on
# 16 threads). Within TOPIC_BUDGET_S (default 90 s): the peer at most DX_PEER_SECONDS (40% of it).
# Writes $OUT/tester-dx/{dx.json, targets.json (the tester's, for DX_TARGETS), dx.log, gpu.txt,
# commit.txt, date.txt, prebuilt.txt}; the rows and targets last.
# Dry run here: BUNDLE_RUN=<a script that runs build/validation/PROGRAM ARGS> DX_BACKEND=cpu (the peer then
# reports that it cannot run, the rows say so, rc 0).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}/tester-dx; mkdir -p "$out"
budget=${TOPIC_BUDGET_S:-90}
peer_s=${DX_PEER_SECONDS:-$(( budget * 2 / 5 ))}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > "$out/gpu.txt" 2>&1
echo "${BATCHSOLVE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}" > "$out/commit.txt"
date -u +%FT%TZ > "$out/date.txt"
export BATCHSOLVE_CACHE_DIR=${BATCHSOLVE_CACHE_DIR:-/tmp/batchsolve-cache}; mkdir -p "$BATCHSOLVE_CACHE_DIR"
carry=.carry/tester-dx
if [[ -z ${BATCHSOLVE_CUSOLVERDX:-} && -x $carry/bench_cusolverdx ]]; then export BATCHSOLVE_CUSOLVERDX=$PWD/$carry/bench_cusolverdx; fi
if [[ -f $carry/prebuilt.tar ]]; then
  pre=/tmp/tester-dx-prebuilt; mkdir -p "$pre" && tar -xf "$carry/prebuilt.tar" -C "$pre"
  export BATCHSOLVE_PREBUILT_DIR=$pre/kernels  # keyed by the generator version: a stale one is not used
  version=$(grep -o '"[0-9a-f]*"' "$pre/generator_version.hpp" | tr -d '"')
  lib=$(dirname "${BUNDLE_RUN:-/tmp/bundle/run}")/lib
  fresh="not checked"; ls "$lib"/libbatchsolve.so* > /dev/null 2>&1 && { grep -aqs "$version" "$lib"/libbatchsolve.so* && fresh=current || fresh="stale: NVRTC compiles here"; }
  echo "prebuilt kernels: $(ls "$pre/kernels" | wc -l), generator version $version ($fresh)" > "$out/prebuilt.txt"
else
  echo "prebuilt kernels: none (NVRTC on the device machine)" > "$out/prebuilt.txt"
fi
echo "peer: ${BATCHSOLVE_CUSOLVERDX:-beside the tester}" >> "$out/prebuilt.txt"
cat "$out/prebuilt.txt"
timeout -k 5 $(( budget - 3 )) "${BUNDLE_RUN:-/tmp/bundle/run}" tester --routine potrf,posv --precision s,d \
  --layout "${DX_LAYOUTS:-column_major}" --n "${DX_NS:-4,8,12,16,24,32,48,64,80,100,128}" --batch "${DX_BATCH:-16384}" \
  --nrhs 1 --distinct 512 --backend "${DX_BACKEND:-cuda}" --ref "${DX_REFS:-cusolver,cusolverdx}" --cusolverdx-seconds "$peer_s" \
  --repeat 7 --warmup 1 --jobs 16 --targets "${DX_TARGETS:-validation/cusolverdx/targets-column-major.json}" \
  --targets-out "$out/targets.json" --json "$out/dx.json" > "$out/dx.log" 2>&1
rc=$?
grep -E '^(GPU|cuSolverDx peer|kernels of|tester:|targets:)' "$out/dx.log"
grep -E "^(routine|potrf|posv) " "$out/dx.log"
echo "tester-dx: rc $rc"
exit $rc
