#!/usr/bin/env bash
# Variable-size GEMM, s and d, the address forms of the slice loads (GemmConfig::copy_offsets) on one
# H200 in one call of at most TOPIC_BUDGET_S (110) s, most important first: (1) every candidate kernel
# of scripts/gpu/gemm-offsets-candidates.json compiled first (whole-batch and listed forms, every core);
# (2) the sweep (tester --sweep, one configuration for the whole batch) of the committed table's tiles
# with 64-bit addresses (copy_offsets 0), 32-bit offsets from the slice corners (1) and those unrolled
# and held per problem (2), plus larger s tiles (128x128x16, 256x128) with 32-bit offsets: on the size
# bins' own problems at x = 512, 256 (set-up gemm_bin) and on sizes uniform in [1, 128]; (3) the table of
# the sweep's winners for those classes (gemm_table.py --keep-classes: the classes 32 and 64 keep the
# committed entries); (4) the final rows against cublas<t>gemmGroupedBatched at x = 512..32, _max and
# checked levels, once with the committed table and once with the sweep's (BATCHSOLVE_TUNING_FILE),
# targets by the tester (targets-committed.json, targets.json); (5) registers and stack of every kernel,
# an Nsight Compute profile of the sweep table's x = 512 call, d and s. Writes $OUT/gemm-offsets/.
#   GEMM_OFFSETS_CONFIRM=1: the confirmation of a table that adopted the winners: no sweep; the final
#   rows with the committed table (targets.json), the skewed batch and SYRK/SYR2K, ncu at x = 512.
# Run from the repository root with the bundle unpacked at /tmp/bundle; BUILD_DIR=build: a dry run here
# with the build tree's executables (no GPU: the tester's rows skip).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}/gemm-offsets; mkdir -p "$out"
if [[ -n ${BUILD_DIR:-} ]]; then  # dry run: the build tree's executables stand in for the bundle's
  run=$out/run-from-build
  printf '#!/usr/bin/env bash\nname=$1; shift\nexe=$(find "%s" -type f -name "$name" -perm -u+x -not -path "*/CMakeFiles/*" | head -1)\n[[ -n $exe ]] || exit 127\nexec "$exe" "$@"\n' \
    "$(cd "$BUILD_DIR" && pwd)" > "$run"
  chmod +x "$run"
else
  run=/tmp/bundle/run
fi
budget=${TOPIC_BUDGET_S:-110}; start=$SECONDS
left() { echo $((budget - (SECONDS - start))); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$out/gpu.txt" 2>&1
commit=${BATCHSOLVE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}; echo "$commit" > "$out/commit.txt"
gpu=$(sed -n 2p "$out/gpu.txt" | cut -d, -f1); gpu=${gpu:-NVIDIA H200}
candidates=scripts/gpu/gemm-offsets-candidates.json
export BATCHSOLVE_CACHE_DIR=/tmp/gemm-offsets-cache; mkdir -p "$BATCHSOLVE_CACHE_DIR"

step() {  # step NAME SECONDS ARGS...: one program run, bounded by its limit and the budget left
  local name=$1 limit=$2; shift 2
  local l; l=$(left)
  (( l < 3 )) && { echo "$name: skipped (budget)" | tee -a "$out/skipped.txt"; return; }
  (( limit > l )) && limit=$l
  echo "== $name ($limit s)"
  timeout -k 2 "$limit" "$@" > "$out/$name.log" 2>&1
  echo "   rc $? after $((SECONDS - start)) s"
}

# the manifest: every candidate whole-batch (the sweep) and listed (a bin of the final rows), plus the
# committed manifest's lines (the committed table's kernels)
python3 - "$candidates" scripts/gpu/gemm.manifest > "$out/warm.manifest" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
for listed in (0, 1):
    for p, configs in doc.items():
        for c in configs:
            print(f"gemm {p} n n full 0 0 {listed} {json.dumps(c, separators=(',', ':'))}")
print(open(sys.argv[2]).read(), end="")
EOF
base=(--routine gemm_vbatched --batch 2000 --repeat 5 --warmup 1 --seed 7)
sweep=("${base[@]}" --sweep --configs "$candidates")
common=("${base[@]}" --setups gemm --ref cublas-grouped)
if [[ -n ${GEMM_OFFSETS_CONFIRM:-} ]]; then
  step final 24 "$run" tester "${common[@]}" --precision d,s --n 512,256,128,64,32 \
    --targets scripts/gpu/gemm-targets.json --targets-out "$out/targets.json" --json "$out/final.json"
  step skewed 10 "$run" tester "${base[@]}" --setups gemm_skewed --precision d,s --n 512,256 --ref cublas-grouped \
    --json "$out/skewed.json"
  step rank-k 10 "$run" tester --routine syrk_vbatched,syr2k_vbatched --batch 2000 --repeat 5 --warmup 1 --seed 7 \
    --setups syrk,syr2k --precision d,s --n 512,128 --json "$out/rank-k.json"
  step complex 14 "$run" tester "${base[@]}" --setups gemm --ref cublas --precision z,c --n 512,128,32 --json "$out/complex.json"
  python3 scripts/gpu/gemm_cubins.py "$BATCHSOLVE_CACHE_DIR" --out "$out/resource-usage.txt" 2> /dev/null
  if command -v ncu > /dev/null; then
    for p in s d; do
      (( $(left) > 12 )) || break
      step ncu-$p 12 ncu --clock-control none --kernel-name regex:gemm_vbatched --launch-count 2 \
        --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
        --section ComputeWorkloadAnalysis --section InstructionStats \
        "$run" tester --routine gemm_vbatched --batch 2000 --repeat 1 --warmup 0 --seed 7 --setups gemm --precision $p --n 512
    done
  fi
  echo "---- gemm-offsets confirmation ($((SECONDS - start)) s of $budget; $gpu; commit $commit)"
  for f in final skewed rank-k complex; do echo "-- $f"; grep -E "^ *(gemm|syrk|syr2k)_vbatched|targets:" "$out/$f.log" 2>/dev/null; done
  cat "$out/skipped.txt" 2>/dev/null
  exit 0
fi
step warmup 20 "$run" batchsolve-warmup --kernels "$out/warm.manifest" --threads "$(nproc)"
step sweep-bins 20 "$run" tester "${sweep[@]}" --setups gemm_bin --precision s,d --n 512,256 --json "$out/sweep-bins.json"
step sweep-128 6 "$run" tester "${sweep[@]}" --setups gemm --precision s,d --n 128 --json "$out/sweep-128.json"
python3 scripts/gpu/gemm_table.py libsolver/tuning/sm90-gemm.json "$out/sm90-gemm.json" "$out"/sweep-*.json \
  --device "$gpu" --commit "$commit" --precisions sd --keep-classes > "$out/table.log" 2>&1
step final-committed 22 "$run" tester "${common[@]}" --precision d,s --n 512,256,128,64,32 \
  --targets scripts/gpu/gemm-targets.json --targets-out "$out/targets-committed.json" --json "$out/final-committed.json"
if [[ -s $out/sm90-gemm.json ]]; then
  (export BATCHSOLVE_TUNING_FILE=$out/sm90-gemm.json
   step final-swept 22 "$run" tester "${common[@]}" --precision d,s --n 512,256,128,64,32 \
     --targets scripts/gpu/gemm-targets.json --targets-out "$out/targets.json" --json "$out/final-swept.json")
fi
python3 scripts/gpu/gemm_cubins.py "$BATCHSOLVE_CACHE_DIR" --out "$out/resource-usage.txt" 2> /dev/null
if command -v ncu > /dev/null && [[ -s $out/sm90-gemm.json ]]; then
  for p in s d; do
    (( $(left) > 12 )) || break
    (export BATCHSOLVE_TUNING_FILE=$out/sm90-gemm.json
     step ncu-$p 12 ncu --clock-control none --kernel-name regex:gemm_vbatched --launch-count 2 \
       --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
       --section ComputeWorkloadAnalysis --section InstructionStats \
       "$run" tester --routine gemm_vbatched --batch 2000 --repeat 1 --warmup 0 --seed 7 --setups gemm --precision $p --n 512)
  done
fi

echo "---- gemm-offsets summary ($((SECONDS - start)) s of $budget; $gpu; commit $commit)"
grep -h "warm\|compiled" "$out/warmup.log" 2>/dev/null | tail -1
cat "$out/table.log" 2>/dev/null
for f in final-committed final-swept; do echo "-- $f"; grep -E "^ *gemm_vbatched|targets:" "$out/$f.log" 2>/dev/null; done
cat "$out/skipped.txt" 2>/dev/null
exit 0
