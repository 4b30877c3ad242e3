#!/usr/bin/env bash
# Variable-size GEMM on one H200 against cuBLAS grouped GEMM, in one call of at most TOPIC_BUDGET_S s,
# most important first. GEMM_MODE chooses what the call is for:
#   tune (default, 150 s): (1) every kernel compiled before anything is timed (the candidates of
#     GEMM_CANDIDATES, default scripts/gpu/gemm-candidates.json, whole-batch and listed forms, on every
#     core); (2) the tile sweep (tester --sweep --configs, one configuration for the whole batch): for the
#     size bins above the first on the bin's own problems (set-up gemm_bin: sizes in [x/2 + 1, x], x = 512,
#     256), for the first bin and the small batches on sizes uniform in [1, x] (x = 128, 64, 32), d and s,
#     then z and c; (3) the table of the winners per precision and size class (gemm_table.py), which the
#     size-binned dispatch runs per bin; (4) the final rows with that table (BATCHSOLVE_TUNING_FILE): _max
#     and checked levels against cublas<t>gemmGroupedBatched, targets.json by the tester; with GEMM_SPLIT=1
#     the region split's table (gemm_table.py --split) beside it at x = 512, 256 (measured slower at
#     5e7029d); (5) c, z beside one cuBLAS call per problem over 16 streams (CUDA 13.0's grouped GEMM
#     refuses complex types; targets-complex.json by the tester), the skewed batch, SYRK/SYR2K rows;
#     (6) what the kernels cost: registers and stack frames of every compiled kernel (gemm_cubins.py), the
#     winners' SASS (cuobjdump), an Nsight Compute profile of the x = 512 call.
#     GEMM_SKIP_SWEEP=1: steps 1-2 skipped, the committed table runs (the final rows only).
#   compare (110 s): the candidates of GEMM_CANDIDATES swept at x = 512, 256 (gemm_bin) and [1, 128], s and
#     d; the sweep's table for those classes (gemm_table.py --keep-classes: the classes 32 and 64 keep the
#     committed entries); the final rows once with the committed table (targets-committed.json) and once
#     with the sweep's (targets.json); registers of every kernel; ncu of the sweep table's x = 512 call.
#   confirm (100 s): the committed table's final rows (targets.json) and, beside them in the same call,
#     the same table with every s and d entry on the tile list (tile_list 1: a persistent grid over the
#     scanned (problem, tile) pairs; targets-tiles.json); then ncu of both at x = 512, the skewed batch,
#     SYRK/SYR2K, c and z against 16 cuBLAS streams.
#   designs (150 s): the address and tile designs side by side at every size class, s and d (GEMM_CANDIDATES,
#     default scripts/gpu/gemm-designs-candidates.json: the committed entries beside copy_offsets 3, the
#     register path's element pointers advanced per slice, on larger tiles; d also on the 16x8x8 DMMA
#     form, dmma16 1); GPU tests of the new forms against the formula; the sweep (sizes uniform in [1, x]
#     at every x, seed 11) and its table
#     (--keep-classes); the final rows with the committed table (targets-committed.json) and with the
#     sweep's (targets.json); SYRK/SYR2K with the sweep's table (their own limit); the skewed batch; c, z;
#     registers of every kernel; ncu of the sweep table's x = 512 call.
#   adopted (80 s): the committed table's final rows (targets.json), with GEMM_CONFIRM_R4=1 d's rows again with
#     BATCHSOLVE_GEMM_TC_ROW=4 (final-r4.json), SYRK/SYR2K (their own limit), a probe
#     sweep (GEMM_PROBE, default scripts/gpu/gemm-probe-candidates.json: the top class's winners beside a few
#     tiles not yet measured, sizes uniform in [1, x], x = 512, 256, seed 11), the GPU tests of the register
#     path's address forms for d and z (their kernels compiled in the warm-up), with GEMM_TRSM=1 trsm_vbatched's
#     recursive and inversion algorithms per order beside cuBLAS (trsm.json), the skewed batch.
#   ktiles (90 s): deeper k-slices (blk_k 16, 32) and larger per-warp DMMA tiles (64x32 and 32x64 per warp:
#     1.5 fragment reads from shared per mma instead of 2) beside the shipped entries (GEMM_CANDIDATES, default
#     scripts/gpu/gemm-ktiles-candidates.json), swept at x = 512, 256, 128 (sizes uniform in [1, x], seed 11),
#     s and d; the sweep's table (--keep-classes); the final rows with the committed table
#     (targets-committed.json) and with the sweep's (targets.json); SYRK/SYR2K with the sweep's table;
#     d's tensor-core slices with rows 4 elements apart (BATCHSOLVE_GEMM_TC_ROW=4) swept and in final rows beside
#     them (the default layout from the commit after e28e399 on, where the switch's =8 gives the former one); registers of every kernel; ncu of the sweep table's d call at x = 512.
#   rows (170 s): d's slice rows per size class (the table's tc_row) and the cp.async ring with advanced
#     pointers, side by side in one run, each against cuBLAS grouped at x = 512..32: (1) every kernel below
#     compiled first; (2) a sweep at x = 512, 256 of GEMM_CANDIDATES (default scripts/gpu/gemm-rows-candidates.json:
#     the shipped top tiles with rows 4 and 8 beside ring forms, stages 3-4, copy_offsets 3; seed 11); (3) the
#     final rows, s and d: the shipped table (per-class rows; targets.json), every d entry with rows 4
#     (final-rows4), every d entry with rows 8 (final-rows8), the ring table (scripts/gpu/gemm-rows-ring.json's
#     entries for the classes 256 and above; final-ring, targets-ring.json); (4) trsm_vbatched's recursive and
#     inversion algorithms per order beside cuBLAS trsmBatched per size (d, then s), their kernels compiled
#     first (batchsolve-warmup --families gemm,triangular).
# Writes $OUT/gemm/; the summary last. Run from the repository root with the bundle unpacked at
# /tmp/bundle; BUILD_DIR=build: a dry run here with the build tree's executables (no GPU: rows skip).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}/gemm; mkdir -p "$out"
if [[ -n ${BUILD_DIR:-} ]]; then  # dry run: the build tree's executables stand in for the bundle's
  run=$out/run-from-build
  printf '#!/usr/bin/env bash\nname=$1; shift\nexe=$(find "%s" -type f -name "$name" -perm -u+x -not -path "*/CMakeFiles/*" | head -1)\n[[ -n $exe ]] || exit 127\nexec "$exe" "$@"\n' \
    "$(cd "$BUILD_DIR" && pwd)" > "$run"
  chmod +x "$run"
else
  run=/tmp/bundle/run
fi
mode=${GEMM_MODE:-tune}
case $mode in tune) default_budget=150 ;; compare) default_budget=110 ;; confirm) default_budget=100 ;; designs) default_budget=150 ;;
  adopted) default_budget=80 ;; ktiles) default_budget=100 ;; rows) default_budget=170 ;;
  *) echo "gemm.sh: GEMM_MODE is tune, compare, confirm, designs, adopted, ktiles or rows (got '$mode')" >&2; exit 2 ;; esac
budget=${TOPIC_BUDGET_S:-$default_budget}; start=$SECONDS
left() { echo $((budget - (SECONDS - start))); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$out/gpu.txt" 2>&1
commit=${BATCHSOLVE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}; echo "$commit" > "$out/commit.txt"
gpu=$(sed -n 2p "$out/gpu.txt" | cut -d, -f1); gpu=${gpu:-NVIDIA H200}
default_candidates=scripts/gpu/gemm-candidates.json
[[ $mode == designs ]] && default_candidates=scripts/gpu/gemm-designs-candidates.json
[[ $mode == ktiles ]] && default_candidates=scripts/gpu/gemm-ktiles-candidates.json
[[ $mode == rows ]] && default_candidates=scripts/gpu/gemm-rows-candidates.json
candidates=${GEMM_CANDIDATES:-$default_candidates}

export BATCHSOLVE_CACHE_DIR=/tmp/gemm-kernel-cache; mkdir -p "$BATCHSOLVE_CACHE_DIR"
for t in /tmp/bundle/gemm-kernels.tar.gz /tmp/bundle/*/gemm-kernels.tar.gz; do
  [[ -f $t ]] && { mkdir -p /tmp/gemm-prebuilt && tar -xzf "$t" -C /tmp/gemm-prebuilt && export BATCHSOLVE_PREBUILT_DIR=/tmp/gemm-prebuilt; break; }
done

# step NAME SECONDS ARGS...: one program run, bounded by its limit and the budget left
step() {
  local name=$1 limit=$2; shift 2
  local l; l=$(left)
  (( l < 3 )) && { echo "$name: skipped (budget)" | tee -a "$out/skipped.txt"; return; }
  (( limit > l )) && limit=$l
  echo "== $name ($limit s)"
  timeout -k 2 "$limit" "$@" > "$out/$name.log" 2>&1
  echo "   rc $? after $((SECONDS - start)) s"
}

# the manifest: every candidate whole-batch (the sweep) and listed (a bin of the final rows), plus the
# committed manifest's lines (the table's current kernels)
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
final_rows() {  # final_rows NAME SECONDS TARGETS_FILE: s and d, x = 512..32, _max and checked, beside cuBLAS grouped
  step "$1" "$2" "$run" tester "${common[@]}" --precision d,s --n 512,256,128,64,32 \
    --targets scripts/gpu/gemm-targets.json --targets-out "$out/$3" --json "$out/$1.json"
}
ncu_512() {  # ncu_512 NAME PRECISION: one _max call at x = 512 (its bins' kernels)
  step "$1" 12 ncu --clock-control none --kernel-name regex:gemm_vbatched --launch-count 3 \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
    --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section InstructionStats \
    "$run" tester --routine gemm_vbatched --batch 2000 --repeat 1 --warmup 0 --seed 7 --setups gemm --precision "$2" --n 512
}
summary() {
  echo "---- gemm $mode summary ($((SECONDS - start)) s of $budget; $gpu; commit $commit)"
  grep -h "warm\|compiled" "$out/warmup.log" 2>/dev/null | tail -1
  cat "$out/table.log" 2>/dev/null
  grep "(edge)" "$out/table-split.log" 2>/dev/null
  for f in "$@"; do echo "-- $f"; grep -E "^ *(gemm|syrk|syr2k|trsm)_vbatched|targets:" "$out/$f.log" 2>/dev/null; done
  cat "$out/skipped.txt" 2>/dev/null
}
if [[ $mode == confirm ]]; then
  # the committed table with tile_list 1 on every s and d entry (c and z as committed)
  python3 - libsolver/tuning/sm90-gemm.json "$out/sm90-gemm-tiles.json" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))
for e in t["entries"]:
    if e["precision"] in "sd":
        e["best"]["config"]["tile_list"] = 1
        e["provenance"] = "tile_list 1 beside the committed entry: " + e["provenance"]
json.dump(t, open(sys.argv[2], "w"), indent=1)
EOF
  final_rows final 24 targets.json
  (export BATCHSOLVE_TUNING_FILE=$out/sm90-gemm-tiles.json; final_rows final-tiles 24 targets-tiles.json)
  if command -v ncu > /dev/null; then
    for p in s d; do
      (( $(left) > 40 )) || break
      ncu_512 ncu-$p $p
      (export BATCHSOLVE_TUNING_FILE=$out/sm90-gemm-tiles.json; ncu_512 ncu-tiles-$p $p)
    done
  fi
  step skewed 8 "$run" tester "${base[@]}" --setups gemm_skewed --precision d,s --n 512,256 --ref cublas-grouped \
    --json "$out/skewed.json"
  step rank-k 8 "$run" tester --routine syrk_vbatched,syr2k_vbatched --batch 2000 --repeat 5 --warmup 1 --seed 7 \
    --setups syrk,syr2k --precision d,s --n 512,128 --json "$out/rank-k.json"
  step complex 14 "$run" tester "${base[@]}" --setups gemm --ref cublas --precision z,c --n 512,128,32 --json "$out/complex.json"
  python3 scripts/gpu/gemm_cubins.py "$BATCHSOLVE_CACHE_DIR" --out "$out/resource-usage.txt" 2> /dev/null
  summary final final-tiles skewed rank-k complex
  exit 0
fi
if [[ $mode == adopted ]]; then
  # the table's s and d kernels (whole batch and listed) and the probe's, compiled before anything is timed
  python3 - libsolver/tuning/sm90-gemm.json "${GEMM_PROBE:-scripts/gpu/gemm-probe-candidates.json}" > "$out/adopted.manifest" <<'EOF2'
import json, sys
table, probe = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
configs = [(e["precision"], e["best"]["config"]) for e in table["entries"] if e["precision"] in "sd"]
configs += [(p, c) for p, cs in probe.items() for c in cs]
for listed in (0, 1):
    for p, c in configs:
        print(f"gemm {p} n n full 0 0 {listed} {json.dumps(c, separators=(',', ':'))}")
# the kernels of the GPU test below (GemmAdvancedPointersWithinTheirAccuracy, d and z): compiled here on every
# core, so that the test's cold NVRTC runs (z's took more than its 14 s step at 15e50aa) are cache hits
base = {"stages": 0, "copy_offsets": 3}
tests = {"z": [dict(blk_m=64, blk_n=64, blk_k=8, dim_x=16, dim_y=16, tensor_cores=False, min_blocks_per_sm=0, **base),
               dict(blk_m=64, blk_n=32, blk_k=8, dim_x=8, dim_y=8, tensor_cores=False, min_blocks_per_sm=8, **base),
               dict(blk_m=64, blk_n=32, blk_k=8, dim_x=2, dim_y=2, tensor_cores=True, min_blocks_per_sm=6, **base)]}
tests["d"] = tests["z"] + [dict(blk_m=64, blk_n=64, blk_k=8, dim_x=2, dim_y=2, tensor_cores=True, min_blocks_per_sm=3, dmma16=1, **base)]
for listed in (0, 1):
    for p, cs in tests.items():
        for c in cs:
            for a, b in (("n", "n"), ("t", "c"), ("c", "t")):
                print(f"gemm {p} {a} {b} full 0 0 {listed} {json.dumps(c, separators=(',', ':'))}")
EOF2
  step warmup 20 "$run" batchsolve-warmup --kernels "$out/adopted.manifest" --threads "$(nproc)"
  final_rows final 26 targets.json
  if [[ -n ${GEMM_CONFIRM_R4:-} ]]; then  # d beside itself with the slices' rows 4 elements apart (kernels _r4)
    grep '^gemm d n n ' "$out/adopted.manifest" > "$out/adopted-d.manifest"
    (export BATCHSOLVE_GEMM_TC_ROW=4
     step warmup-r4 10 "$run" batchsolve-warmup --kernels "$out/adopted-d.manifest" --threads "$(nproc)"
     step final-r4 10 "$run" tester "${common[@]}" --precision d --n 512,256,128,64,32 --json "$out/final-r4.json")
  fi
  step rank-k 18 "$run" tester --routine syrk_vbatched,syr2k_vbatched --batch 2000 --repeat 5 --warmup 1 --seed 7 \
    --setups syrk,syr2k --precision d,s --n 512,128 --json "$out/rank-k.json"
  step probe 14 "$run" tester --routine gemm_vbatched --batch 2000 --repeat 5 --warmup 1 --seed 11 --sweep \
    --configs "${GEMM_PROBE:-scripts/gpu/gemm-probe-candidates.json}" --setups gemm --precision d,s --n 512,256 --json "$out/probe.json"
  # d and z (z cut by its 14 s step at 15e50aa; s, d and c passed at 8936072)
  step gpu-tests 20 "$run" batchsolve_vbatched_blas_test --gtest_filter='VbatchedBlas/5.GemmAdvanced*:VbatchedBlas/7.GemmAdvanced*'
  # with GEMM_TRSM=1: TRSM's two algorithms side by side per order (the crossover of sm90-trsm.json), cuBLAS
  # trsmBatched per distinct size beside them
  [[ -n ${GEMM_TRSM:-} ]] && step trsm 14 "$run" tester --routine trsm_vbatched --all-variants --batch 2000 --repeat 5 --warmup 1 \
    --seed 7 --ref cublas --precision d,s --n 512,256,128,64,32 --json "$out/trsm.json"
  step skewed 8 "$run" tester "${base[@]}" --setups gemm_skewed --precision d,s --n 512,256 --ref cublas-grouped \
    --json "$out/skewed.json"
  python3 scripts/gpu/gemm_cubins.py "$BATCHSOLVE_CACHE_DIR" --out "$out/resource-usage.txt" 2> /dev/null
  summary final final-r4 trsm rank-k skewed
  grep -hE "^gemm_vbatched" "$out/probe.log" 2>/dev/null
  grep -hE "^\[  (PASSED|FAILED) " "$out/gpu-tests.log" 2>/dev/null
  exit 0
fi
if [[ $mode == rows ]]; then
  # the three variant tables, made from the shipped one: d's tensor-core entries with rows 4 (every class),
  # with rows 8 (every class), and the ring design's entries (gemm-rows-ring.json) for their classes
  python3 - libsolver/tuning/sm90-gemm.json scripts/gpu/gemm-rows-ring.json "$out" <<'EOF2'
import copy, json, sys
table, ring, out = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
def variant(name, change, what):
    t = copy.deepcopy(table)
    for e in t["entries"]:
        if change(e):
            e["provenance"] = what + " (scripts/gpu/gemm-rows.sh), in place of: " + e["provenance"]
    json.dump(t, open(f"{out}/sm90-gemm-{name}.json", "w"), indent=1)
def rows(r):
    def change(e):
        c = e["best"]["config"]
        if e["precision"] != "d" or not c.get("tensor_cores") or c.get("tc_row") == r:
            return False
        c["tc_row"] = r
        return True
    return change
def ring_entry(e):
    c = ring.get(e["precision"], {}).get(str(e["n"]))
    if c is None:
        return False
    e["best"]["config"] = c
    return True
variant("r4", rows(4), "rows 4 apart")
variant("r8", rows(8), "rows 8 apart")
variant("ring", ring_entry, "the cp.async ring with advanced pointers")
EOF2
  # every kernel of the four tables (s and d, whole batch and listed) and of the sweep, compiled first
  python3 - "$candidates" "$out" libsolver/tuning/sm90-gemm.json > "$out/rows.manifest" <<'EOF2'
import json, sys
doc, out, shipped = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
configs = [(p, c) for p, cs in doc.items() for c in cs]
for f in (shipped, f"{out}/sm90-gemm-r4.json", f"{out}/sm90-gemm-r8.json", f"{out}/sm90-gemm-ring.json"):
    configs += [(e["precision"], e["best"]["config"]) for e in json.load(open(f))["entries"] if e["precision"] in "sd"]
seen = set()
for listed in (0, 1):
    for p, c in configs:
        line = f"gemm {p} n n full 0 0 {listed} {json.dumps(c, separators=(',', ':'))}"
        if line not in seen:
            seen.add(line)
            print(line)
EOF2
  step warmup 20 "$run" batchsolve-warmup --kernels "$out/rows.manifest" --threads "$(nproc)"
  step sweep-rows 8 "$run" tester --routine gemm_vbatched --batch 2000 --repeat 5 --warmup 1 --seed 11 --sweep \
    --configs "$candidates" --setups gemm --precision d,s --n 512,256 --json "$out/sweep-rows.json"
  final_rows final 16 targets.json
  (export BATCHSOLVE_TUNING_FILE=$out/sm90-gemm-r4.json
   step final-rows4 10 "$run" tester "${common[@]}" --precision d --n 512,256,128,64,32 --json "$out/final-rows4.json")
  (export BATCHSOLVE_TUNING_FILE=$out/sm90-gemm-r8.json
   step final-rows8 10 "$run" tester "${common[@]}" --precision d --n 512,256,128,64,32 --json "$out/final-rows8.json")
  (export BATCHSOLVE_TUNING_FILE=$out/sm90-gemm-ring.json; final_rows final-ring 16 targets-ring.json)
  # TRSM's two algorithms per order (the crossover of sm90-trsm.json): their kernels compiled on every core
  # first (cut at 14 s in call 2 of 2026-12-03 with nothing written: cold NVRTC compiles one at a time),
  # then one precision per step so that a cut loses one
  step warmup-trsm 25 "$run" batchsolve-warmup --families gemm,triangular --precisions d,s --threads "$(nproc)"
  # (stdbuf: the rows reach the log as they finish, so that a step cut by its limit keeps them)
  linebuf=(); command -v stdbuf > /dev/null && linebuf=(stdbuf -oL)
  for p in d s; do
    step trsm-$p $([[ $p == d ]] && echo 26 || echo 22) "${linebuf[@]}" "$run" tester --routine trsm_vbatched --all-variants \
      --batch 2000 --repeat 5 --warmup 1 --seed 7 --ref cublas --precision $p --n 512,256,128,64,32 --json "$out/trsm-$p.json"
  done
  python3 scripts/gpu/gemm_cubins.py "$BATCHSOLVE_CACHE_DIR" --out "$out/resource-usage.txt" 2> /dev/null
  python3 scripts/gpu/gemm_report.py "$out" --mode rows > /dev/null 2>&1
  summary final final-rows4 final-rows8 final-ring trsm-d trsm-s
  grep -hE "^gemm_vbatched" "$out/sweep-rows.log" 2>/dev/null
  grep -h "warm\|compiled" "$out/warmup-trsm.log" 2>/dev/null | tail -1
  exit 0
fi
if [[ $mode == ktiles ]]; then
  step warmup 20 "$run" batchsolve-warmup --kernels "$out/warm.manifest" --threads "$(nproc)"
  tune=(--routine gemm_vbatched --batch 2000 --repeat 5 --warmup 1 --seed 11 --sweep --configs "$candidates")
  step sweep-uniform 16 "$run" tester "${tune[@]}" --setups gemm --precision d,s --n 512,256 --json "$out/sweep-uniform.json"
  step sweep-128 8 "$run" tester "${tune[@]}" --setups gemm --precision d,s --n 128 --json "$out/sweep-128.json"
  python3 scripts/gpu/gemm_table.py libsolver/tuning/sm90-gemm.json "$out/sm90-gemm.json" "$out"/sweep-*.json \
    --device "$gpu" --commit "$commit" --precisions sd --keep-classes > "$out/table.log" 2>&1
  final_rows final-committed 18 targets-committed.json
  if [[ -s $out/sm90-gemm.json ]]; then
    (export BATCHSOLVE_TUNING_FILE=$out/sm90-gemm.json
     final_rows final-swept 18 targets.json
     step rank-k 10 "$run" tester --routine syrk_vbatched,syr2k_vbatched --batch 2000 --repeat 5 --warmup 1 --seed 7 \
       --setups syrk,syr2k --precision d,s --n 512,128 --json "$out/rank-k.json")
  fi
  # d's tensor-core slices with rows 4 elements apart mod 16 (BATCHSOLVE_GEMM_TC_ROW=4, kernels _r4: the
  # k-fastest stores of op(B)'s slice without 4-way bank conflicts) beside the same tiles above
  grep '^gemm d ' "$out/warm.manifest" > "$out/warm-d.manifest"
  (export BATCHSOLVE_GEMM_TC_ROW=4
   step warmup-r4 10 "$run" batchsolve-warmup --kernels "$out/warm-d.manifest" --threads "$(nproc)"
   step sweep-r4 10 "$run" tester "${tune[@]}" --setups gemm --precision d --n 512,256,128 --json "$out/sweep-r4.json"
   [[ -s $out/sm90-gemm.json ]] && (export BATCHSOLVE_TUNING_FILE=$out/sm90-gemm.json
     step final-swept-r4 10 "$run" tester "${common[@]}" --precision d --n 512,256,128,64,32 --json "$out/final-swept-r4.json"))
  python3 scripts/gpu/gemm_cubins.py "$BATCHSOLVE_CACHE_DIR" --out "$out/resource-usage.txt" 2> /dev/null
  if command -v ncu > /dev/null && [[ -s $out/sm90-gemm.json ]] && (( $(left) > 14 )); then
    (export BATCHSOLVE_TUNING_FILE=$out/sm90-gemm.json; ncu_512 ncu-d d)
  fi
  summary final-committed final-swept final-swept-r4 rank-k
  grep -hE "^gemm_vbatched" "$out/sweep-r4.log" 2>/dev/null
  exit 0
fi
if [[ $mode == designs ]]; then
  step warmup 25 "$run" batchsolve-warmup --kernels "$out/warm.manifest" --threads "$(nproc)"
  # the new address form on the GPU against the formula (every precision, SIMT and DMMA, every operand form)
  step gpu-tests 20 "$run" batchsolve_vbatched_blas_test \
    --gtest_filter='VbatchedBlas/4.GemmAdvanced*:VbatchedBlas/5.GemmAdvanced*:VbatchedBlas/6.GemmAdvanced*:VbatchedBlas/7.GemmAdvanced*'
  # the table's sweep on the distribution the targets measure (m, n, k uniform in [1, x]; at x = 512 the
  # top bin holds 94 % of the flops, many of them skinny problems that the square bin set-up does not
  # have), on a batch of its own (seed 11; the final rows use seed 7)
  tune=(--routine gemm_vbatched --batch 2000 --repeat 5 --warmup 1 --seed 11 --sweep --configs "$candidates")
  step sweep-uniform 30 "$run" tester "${tune[@]}" --setups gemm --precision d,s --n 512,256 --json "$out/sweep-uniform.json"
  step sweep-small 14 "$run" tester "${tune[@]}" --setups gemm --precision d,s --n 128,64,32 --json "$out/sweep-small.json"
  python3 scripts/gpu/gemm_table.py libsolver/tuning/sm90-gemm.json "$out/sm90-gemm.json" "$out"/sweep-*.json \
    --device "$gpu" --commit "$commit" --precisions sd --keep-classes > "$out/table.log" 2>&1
  final_rows final-committed 22 targets-committed.json
  if [[ -s $out/sm90-gemm.json ]]; then
    (export BATCHSOLVE_TUNING_FILE=$out/sm90-gemm.json
     final_rows final-swept 22 targets.json
     step rank-k 30 "$run" tester --routine syrk_vbatched,syr2k_vbatched --batch 2000 --repeat 5 --warmup 1 --seed 7 \
       --setups syrk,syr2k --precision d,s --n 512,128 --json "$out/rank-k.json")
  fi
  # the same candidates on the square bins (m = n = k in [x/2 + 1, x]): each tile's rate where it fills
  step square-bins 20 "$run" tester "${sweep[@]}" --setups gemm_bin --precision d,s --n 512,256 --json "$out/square-bins.json"
  step skewed 10 "$run" tester "${base[@]}" --setups gemm_skewed --precision d,s --n 512,256 --ref cublas-grouped \
    --json "$out/skewed.json"
  python3 scripts/gpu/gemm_cubins.py "$BATCHSOLVE_CACHE_DIR" --out "$out/resource-usage.txt" 2> /dev/null
  if command -v ncu > /dev/null && [[ -s $out/sm90-gemm.json ]]; then
    for p in d s; do
      (( $(left) > 14 )) || break
      (export BATCHSOLVE_TUNING_FILE=$out/sm90-gemm.json; ncu_512 ncu-$p $p)
    done
  fi
  step complex 14 "$run" tester "${base[@]}" --setups gemm --ref cublas --precision z,c --n 512,128,32 --json "$out/complex.json"
  summary final-committed final-swept rank-k skewed complex
  grep -hE "^\[  (PASSED|FAILED) " "$out/gpu-tests.log" 2>/dev/null
  exit 0
fi
if [[ $mode == compare ]]; then
  step warmup 20 "$run" batchsolve-warmup --kernels "$out/warm.manifest" --threads "$(nproc)"
  step sweep-bins 20 "$run" tester "${sweep[@]}" --setups gemm_bin --precision s,d --n 512,256 --json "$out/sweep-bins.json"
  step sweep-128 6 "$run" tester "${sweep[@]}" --setups gemm --precision s,d --n 128 --json "$out/sweep-128.json"
  python3 scripts/gpu/gemm_table.py libsolver/tuning/sm90-gemm.json "$out/sm90-gemm.json" "$out"/sweep-*.json \
    --device "$gpu" --commit "$commit" --precisions sd --keep-classes > "$out/table.log" 2>&1
  final_rows final-committed 22 targets-committed.json
  [[ -s $out/sm90-gemm.json ]] && (export BATCHSOLVE_TUNING_FILE=$out/sm90-gemm.json; final_rows final-swept 22 targets.json)
  python3 scripts/gpu/gemm_cubins.py "$BATCHSOLVE_CACHE_DIR" --out "$out/resource-usage.txt" 2> /dev/null
  if command -v ncu > /dev/null && [[ -s $out/sm90-gemm.json ]]; then
    for p in s d; do
      (( $(left) > 12 )) || break
      (export BATCHSOLVE_TUNING_FILE=$out/sm90-gemm.json; ncu_512 ncu-$p $p)
    done
  fi
  summary final-committed final-swept
  exit 0
fi
if [[ -z ${GEMM_SKIP_SWEEP:-} ]]; then
  step warmup 25 "$run" batchsolve-warmup --kernels "$out/warm.manifest" --threads "$(nproc)"
  step sweep-bins 30 "$run" tester "${sweep[@]}" --setups gemm_bin --precision d,s --n 512,256 --json "$out/sweep-bins.json"
  step sweep-small 14 "$run" tester "${sweep[@]}" --setups gemm --precision d,s --n 128,64,32 --json "$out/sweep-small.json"
  step sweep-complex-bins 16 "$run" tester "${sweep[@]}" --setups gemm_bin --precision z,c --n 512 --json "$out/sweep-complex-bins.json"
  step sweep-complex-small 10 "$run" tester "${sweep[@]}" --setups gemm --precision z,c --n 128,64,32 --json "$out/sweep-complex-small.json"
  step sweep-complex-256 8 "$run" tester "${sweep[@]}" --setups gemm_bin --precision z,c --n 256 --json "$out/sweep-complex-256.json"
  # z keeps the shipped entries by default (GEMM_TABLE_PRECISIONS): they were chosen for the spills of
  # SYRK/HERK's conj/trans forms, which the n x n sweep does not see
  python3 scripts/gpu/gemm_table.py libsolver/tuning/sm90-gemm.json "$out/sm90-gemm.json" "$out"/sweep-*.json \
    --device "$gpu" --commit "$commit" --precisions "${GEMM_TABLE_PRECISIONS:-sdc}" > "$out/table.log" 2>&1
  python3 scripts/gpu/gemm_table.py libsolver/tuning/sm90-gemm.json "$out/sm90-gemm-split.json" "$out"/sweep-*.json \
    --device "$gpu" --commit "$commit" --split > "$out/table-split.log" 2>&1
  [[ -s $out/sm90-gemm.json ]] && export BATCHSOLVE_TUNING_FILE=$out/sm90-gemm.json
fi
step final 26 "$run" tester "${common[@]}" --precision d,s --n 512,256,128,64,32 \
  --targets scripts/gpu/gemm-targets.json --targets-out "$out/targets.json" --json "$out/final.json"
# d's 16x8x8 DMMA against the 8x8x4 form it replaced, the same table (the kernels named _m8)
(export BATCHSOLVE_GEMM_DMMA=8x8x4
 step final-m8 12 "$run" tester "${common[@]}" --precision d --n 512,256,128,64,32 --json "$out/final-m8.json")
# the region split beside it (GEMM_SPLIT=1): the bins' interior tiles where they fill, edge tiles on the rest
if [[ -n ${GEMM_SPLIT:-} && -s $out/sm90-gemm-split.json ]] && grep -q '(edge)' "$out/table-split.log"; then
  (export BATCHSOLVE_TUNING_FILE=$out/sm90-gemm-split.json
   step split 12 "$run" tester "${common[@]}" --precision d,s --n 512,256 --json "$out/split.json")
fi
# c, z: cublasGemmGroupedBatchedEx refuses complex types on CUDA 13.0, so the peer of the targets is
# one cuBLAS call per problem over 16 streams (cublas); the grouped call is tried too
step complex 20 "$run" tester "${base[@]}" --setups gemm --ref cublas-grouped,cublas --precision z,c --n 512,256,128,64,32 \
  --targets scripts/gpu/gemm-targets-complex.json --targets-out "$out/targets-complex.json" --json "$out/complex.json"
step skewed 8 "$run" tester "${base[@]}" --setups gemm_skewed --precision d,s --n 512,256 --ref cublas-grouped \
  --json "$out/skewed.json"
# SYRK and SYR2K (one triangle through the same kernels) at the GEMM rate's sizes
step rank-k 8 "$run" tester --routine syrk_vbatched,syr2k_vbatched --batch 2000 --repeat 5 --warmup 1 --seed 7 \
  --setups syrk,syr2k --precision d,s --n 512,128 --json "$out/rank-k.json"

# what the kernels cost: registers, shared memory, stack per compiled kernel; the SASS of the d and s
# winners at x = 512; an Nsight Compute profile of one _max call at x = 512 (its bins' kernels)
if command -v cuobjdump > /dev/null; then
  # kernel names as codegen/blas3/gemm.cpp spells them (name_of), for the table's entries of d and s
  python3 - "$out/sm90-gemm.json" libsolver/tuning/sm90-gemm.json > "$out/winners.txt" 2>/dev/null <<'EOF'
import json, os, sys
t = json.load(open(sys.argv[1] if os.path.exists(sys.argv[1]) else sys.argv[2]))
for e in t["entries"]:
    c, p = e["best"]["config"], e["precision"]
    if p not in "ds":
        continue
    tail = (f"_{c['blk_m']}x{c['blk_n']}x{c['blk_k']}_{c['dim_x']}x{c['dim_y']}" +
            (f"_min{c['min_blocks_per_sm']}" if c.get("min_blocks_per_sm", 0) > 1 else "") +
            (("_tf32" if p == "s" else "_dmma") if c.get("tensor_cores") else "") +
            (f"_st{c['stages']}" if c.get("stages", 0) >= 2 else ""))
    print(f"bs_{p}gemm_vbatched_n_n{'_listed' if e['n'] > 128 else ''}{tail}")
EOF
  for f in "$BATCHSOLVE_CACHE_DIR"/*.cubin; do  # the cache's files: a 32-byte header, then the ELF
    tail -c +33 "$f" > /tmp/gemm-one.cubin
    name=$(cuobjdump --dump-resource-usage /tmp/gemm-one.cubin 2>/dev/null | sed -n 's/.*Function \([^:]*\):.*/\1/p' | head -1)
    [[ -n $name ]] && grep -qx "$name" "$out/winners.txt" 2>/dev/null && cuobjdump --dump-sass /tmp/gemm-one.cubin > "$out/sass-$name.txt" 2>/dev/null
  done
fi
python3 scripts/gpu/gemm_cubins.py "$BATCHSOLVE_CACHE_DIR" --out "$out/resource-usage.txt" 2> /dev/null
if command -v ncu > /dev/null; then
  for p in d s; do
    (( $(left) > 12 )) || break
    step ncu-$p 12 ncu --clock-control none --kernel-name regex:gemm_vbatched --launch-count 3 \
      --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
      --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section InstructionStats \
      "$run" tester --routine gemm_vbatched --batch 2000 --repeat 1 --warmup 0 --seed 7 --setups gemm --precision $p --n 512
  done
fi

echo "---- gemm summary ($((SECONDS - start)) s of $budget; $gpu; commit $commit)"
grep -h "warm\|compiled" "$out/warmup.log" 2>/dev/null | tail -1
cat "$out/table.log" 2>/dev/null
grep "(edge)" "$out/table-split.log" 2>/dev/null
for f in final final-m8 split complex skewed rank-k; do grep -E "^ *(gemm|syrk|syr2k)_vbatched|targets:" "$out/$f.log" 2>/dev/null; done
cat "$out/skipped.txt" 2>/dev/null
exit 0
