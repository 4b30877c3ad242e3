#!/usr/bin/env bash
# Variable-size GEMM on one H200 against cuBLAS grouped GEMM, in one call of at most TOPIC_BUDGET_S
# (24) s, most important first: (1) the tile candidates side by side (tester --sweep, one
# configuration for the whole batch: the register-staged tiles of the old table beside the cp.async
# ring tiles) at x = 512, 256, then 128, 64, 32, for d and s; (2) the table of their winners per size
# class (gemm_table.py), which the size-binned dispatch runs per bin; (3) the final rows with that
# table (BATCHSOLVE_TUNING_FILE): _max and checked levels against cublas<t>gemmGroupedBatched,
# targets.json by the tester; (4) the skewed batch (90 % of the problems <= 32, 10 % near x), where
# the bins differ most; (5) c and z against cublasGemmGroupedBatchedEx. Every kernel is
# compiled before anything is timed (the manifest gemm.manifest on every core, after the prebuilt
# kernels shipped beside the bundle, if any). Writes $OUT/gemm/; the summary last.
# Run from the repository root with the bundle unpacked at /tmp/bundle.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}/gemm; mkdir -p "$out"
run=/tmp/bundle/run
budget=${TOPIC_BUDGET_S:-24}; start=$SECONDS
left() { echo $((budget - (SECONDS - start))); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$out/gpu.txt" 2>&1
commit=$(git rev-parse --short HEAD 2>/dev/null || echo "${BATCHSOLVE_COMMIT:-unknown}"); echo "$commit" > "$out/commit.txt"
gpu=$(sed -n 2p "$out/gpu.txt" | cut -d, -f1); gpu=${gpu:-NVIDIA H200}

export BATCHSOLVE_CACHE_DIR=/tmp/gemm-kernel-cache; mkdir -p "$BATCHSOLVE_CACHE_DIR"
for t in /tmp/bundle/gemm-kernels.tar.gz /tmp/bundle/*/gemm-kernels.tar.gz; do
  [[ -f $t ]] && { mkdir -p /tmp/gemm-prebuilt && tar -xzf "$t" -C /tmp/gemm-prebuilt && export BATCHSOLVE_PREBUILT_DIR=/tmp/gemm-prebuilt; break; }
done

# step NAME SECONDS ARGS...: one program run, bounded by its limit and the budget left
step() {
  local name=$1 limit=$2; shift 2
  local l; l=$(left)
  (( l < 2 )) && { echo "$name: skipped (budget)" | tee -a "$out/skipped.txt"; return; }
  (( limit > l )) && limit=$l
  echo "== $name ($limit s)"
  timeout -k 2 "$limit" "$@" > "$out/$name.log" 2>&1
  echo "   rc $? after $((SECONDS - start)) s"
}

step warmup 4 "$run" batchsolve-warmup --kernels scripts/gpu/gemm.manifest --threads 16
base=(--routine gemm_vbatched --batch 2000 --repeat 5 --warmup 1 --seed 7); common=("${base[@]}" --setups gemm)
step sweep-large 5 "$run" tester "${common[@]}" --precision d,s --n 512,256 --sweep --json "$out/sweep-large.json"
step sweep-small 3 "$run" tester "${common[@]}" --precision d,s --n 128,64,32 --sweep --json "$out/sweep-small.json"
python3 scripts/gpu/gemm_table.py libsolver/tuning/sm90-gemm.json "$out/sm90-gemm.json" "$out/sweep-large.json" \
  "$out/sweep-small.json" --device "$gpu" --commit "$commit" > "$out/table.log" 2>&1
[[ -s $out/sm90-gemm.json ]] && export BATCHSOLVE_TUNING_FILE=$out/sm90-gemm.json
step final 7 "$run" tester "${common[@]}" --precision d,s --n 512,256,128,64,32 --ref cublas-grouped \
  --targets scripts/gpu/gemm-targets.json --targets-out "$out/targets.json" --json "$out/final.json"
step skewed 2 "$run" tester "${base[@]}" --setups gemm_skewed --precision d,s --n 512,256 --ref cublas-grouped \
  --json "$out/skewed.json"
step complex 3 "$run" tester "${common[@]}" --precision z,c --n 512,128,32 --ref cublas-grouped \
  --targets scripts/gpu/gemm-targets-complex.json --targets-out "$out/targets-complex.json" --json "$out/complex.json"

echo "---- gemm summary ($((SECONDS - start)) s of $budget; $gpu; commit $commit)"
grep -h "warm\|compiled" "$out/warmup.log" 2>/dev/null | tail -1
cat "$out/table.log" 2>/dev/null
for f in final skewed complex; do grep -E "^ *gemm_vbatched|targets:" "$out/$f.log" 2>/dev/null; done
cat "$out/skipped.txt" 2>/dev/null
exit 0
