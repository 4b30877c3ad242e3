#!/usr/bin/env bash
# How the size-binned GEMM dispatch runs its bins, side by side in one run against cuBLAS grouped GEMM
# (2000 problems, m, n, k uniform in [1, x]; the tester's final rows, _max and checked levels):
#   shipped  the committed table: the bins one after another on one stream, largest first (bin_launch 0)
#   streams  every s/d entry with bin_launch 1: each bin's kernels on a stream of their own (largest bin at
#            the greatest priority), joined on the context's stream, so a bin's last wave overlaps the next's
#   sorted   bin_order 1: each bin's problems sorted on the device by m * n * k, largest first (CUB
#            segmented radix sort), so that a bin's last wave holds its smallest problems
#   both     bin_launch 1 and bin_order 1
#   fused    bin_launch 2: every bin in one launch, each bin's tile a code path of one kernel on its own
#            range of a one-dimensional grid (the largest bin's blocks first, the smaller bins' filling its
#            last wave), the block size common, the launch bound the hungriest path's
#   fused-sorted  bin_launch 2 and bin_order 1
# Only the fused kernels are new (the dispatch fields change no other kernel's text); the warm-up compiles
# the shipped table's kernels and the fused kernels of its bins at x = 512, 256 on every core first.
# Order: the shipped rows at every x (targets.json), the designs at x = 512, 256 (the sizes with more than
# one bin; x <= 128 runs one kernel whatever the fields say), the shipped rows at 512, 256 again (the drift
# between the first and the last), the GEMM entry's GPU tests (sizes across the bins, zeros, beta = 0
# over NaN, every precision) under the fused and the both tables, the skewed batch (90 % of problems
# <= 32) for the shipped, fused and both tables, then c and z (shipped and streams beside one cuBLAS call
# per problem over 16 streams; z's shipped bins share one tile, so only c is binned).
# Writes $OUT/gemm-binned/; TOPIC_BUDGET_S (default 120) s. BUILD_DIR=build-gpu: a dry run from the build
# tree (no GPU: the rows skip, the tables and the manifest are written).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}/gemm-binned; mkdir -p "$out"
if [[ -n ${BUILD_DIR:-} ]]; then  # dry run: the build tree's executables stand in for the bundle's
  run=$out/run-from-build
  printf '#!/usr/bin/env bash\nname=$1; shift\nexe=$(find "%s" -type f -name "$name" -perm -u+x -not -path "*/CMakeFiles/*" | head -1)\n[[ -n $exe ]] || exit 127\nexec "$exe" "$@"\n' \
    "$(cd "$BUILD_DIR" && pwd)" > "$run"
  chmod +x "$run"
else
  run=/tmp/bundle/run
fi
budget=${TOPIC_BUDGET_S:-120}; start=$SECONDS
left() { echo $((budget - (SECONDS - start))); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$out/gpu.txt" 2>&1
commit=${BATCHSOLVE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}; echo "$commit" > "$out/commit.txt"
date -u +%FT%TZ > "$out/date.txt"
export BATCHSOLVE_CACHE_DIR=/tmp/gemm-kernel-cache; mkdir -p "$BATCHSOLVE_CACHE_DIR"
for t in /tmp/bundle/gemm-kernels.tar.gz /tmp/bundle/*/gemm-kernels.tar.gz; do
  [[ -f $t ]] && { mkdir -p /tmp/gemm-prebuilt && tar -xzf "$t" -C /tmp/gemm-prebuilt && export BATCHSOLVE_PREBUILT_DIR=/tmp/gemm-prebuilt; break; }
done

# step NAME SECONDS ARGS...: one program run, bounded by its limit and the budget left (a margin of 4 s)
step() {
  local name=$1 limit=$2; shift 2
  local l; l=$(( $(left) - 4 ))
  (( l < 3 )) && { echo "$name: skipped (budget)" | tee -a "$out/skipped.txt"; return; }
  (( limit > l )) && limit=$l
  echo "== $name ($limit s)"
  timeout -k 2 "$limit" "$@" > "$out/$name.log" 2>&1
  echo "   rc $? after $((SECONDS - start)) s"
}

# the design tables, made from the shipped one: the dispatch fields on every entry (the largest bin's
# entry decides; the others' are ignored), provenance saying so
python3 - libsolver/tuning/sm90-gemm.json "$out" <<'EOF' || { echo "gemm-binned: the design tables failed" >&2; exit 1; }
import copy, json, sys
table, out = json.load(open(sys.argv[1])), sys.argv[2]
def variant(name, fields, what):
    t = copy.deepcopy(table)
    for e in t["entries"]:
        e["best"]["config"].update(fields)
        e["provenance"] = what + " (scripts/gpu/gemm-binned.sh), in place of the shipped dispatch: " + e["provenance"]
    json.dump(t, open(f"{out}/sm90-gemm-{name}.json", "w"), indent=1)
variant("streams", {"bin_launch": 1}, "bin_launch 1: a stream per bin")
variant("sorted", {"bin_order": 1}, "bin_order 1: each bin's problems largest m * n * k first")
variant("both", {"bin_launch": 1, "bin_order": 1}, "bin_launch 1 and bin_order 1")
variant("fused", {"bin_launch": 2}, "bin_launch 2: every bin in one launch")
variant("fused-sorted", {"bin_launch": 2, "bin_order": 1}, "bin_launch 2 and bin_order 1")
EOF
# every kernel the rows run: each table entry whole-batch (one bin) and listed (a bin), every precision,
# and the fused kernel of the bins at x = 512 and 256 (the launcher's bins: 128, then doubling up to the
# largest problem, each with the entry of its class, neighbours with the same tile merged, largest first)
python3 - libsolver/tuning/sm90-gemm.json > "$out/binned.manifest" <<'EOF'
import json, sys
entries = [e for e in json.load(open(sys.argv[1]))["entries"] if e["routine"] == "gemm_vbatched"]
def text(c):
    return json.dumps({k: v for k, v in c.items() if k not in ("bin_launch", "bin_order")}, separators=(",", ":"))
seen = set()
def emit(line):
    if line not in seen:
        seen.add(line)
        print(line)
for listed in (0, 1):
    for e in entries:
        emit(f"gemm {e['precision']} n n full 0 0 {listed} {text(e['best']['config'])}")
def entry(p, hi):
    mine = sorted((e for e in entries if e["precision"] == p), key=lambda e: e["n"])
    return next((e for e in mine if e["n"] >= hi), mine[-1])["best"]["config"]
for p in "sdcz":
    for x in (511, 255):  # the batch's largest problem: below x (the bins are those of any size in (x/2, x])
        tiles, hi = [], 128
        while True:
            c = text(entry(p, min(hi, x)))
            if not tiles or tiles[-1] != c:
                tiles.append(c)
            if hi >= x:
                break
            hi *= 2
        threads = {(32 if c["tensor_cores"] else 1) * c["dim_x"] * c["dim_y"] for c in map(json.loads, tiles)}
        if len(tiles) > 1 and len(threads) == 1:  # else the launcher keeps one launch per bin
            emit(f"gemm {p} n n full 0 0 1 [{','.join(reversed(tiles))}]")
EOF
# then the fused kernels of the other operand forms and triangles the GPU tests run (the launcher's own
# plan under the fused table: batchsolve-warmup --list), after the n x n ones above
BATCHSOLVE_TUNING_FILE=$out/sm90-gemm-fused.json "$run" batchsolve-warmup --families gemm --precisions s,d,c,z --arch 90 --list \
  2> "$out/list.log" | grep ' \[' | grep -v '^gemm . n n full ' >> "$out/binned.manifest"
# the tables parse and every manifest kernel can be generated (no GPU needed)
step check 5 "$run" batchsolve-warmup --kernels "$out/binned.manifest" --check-only
step warmup 22 "$run" batchsolve-warmup --kernels "$out/binned.manifest" --threads "$(nproc)"

base=(--routine gemm_vbatched --batch 2000 --repeat 5 --warmup 1 --seed 7)
common=("${base[@]}" --setups gemm --ref cublas-grouped --targets scripts/gpu/gemm-targets.json)
rows() {  # rows NAME SECONDS TABLE|- SIZES [TESTER ARGS...]: s and d against cuBLAS grouped, targets-NAME.json
  local name=$1 secs=$2 table=$3 sizes=$4; shift 4
  if [[ $table == - ]]; then
    step "$name" "$secs" "$run" tester "${common[@]}" --precision d,s --n "$sizes" --targets-out "$out/targets-$name.json" \
      --json "$out/$name.json" "$@"
  else
    (export BATCHSOLVE_TUNING_FILE=$table
     step "$name" "$secs" "$run" tester "${common[@]}" --precision d,s --n "$sizes" --targets-out "$out/targets-$name.json" \
       --json "$out/$name.json" "$@")
  fi
}
rows shipped 16 - 512,256,128,64,32
rows streams 8 "$out/sm90-gemm-streams.json" 512,256
rows sorted 8 "$out/sm90-gemm-sorted.json" 512,256
rows both 8 "$out/sm90-gemm-both.json" 512,256
rows fused 8 "$out/sm90-gemm-fused.json" 512,256
rows fused-sorted 8 "$out/sm90-gemm-fused-sorted.json" 512,256
rows shipped-again 8 - 512,256
# the GPU tests of the GEMM entry (sizes across the bins, zeros, ones, beta = 0 over NaN, every precision)
# under each design's table, against the formula
# (the CUDA instances, 4..7 = s d c z, of the tests that run the default dispatch)
gpu_tests=
for i in 4 5 6 7; do
  for t in GemmSizeBinsExactAtEveryLevel GemmBetaZeroIgnoresNaNInC GemmAlphaZeroAndKZeroScaleC GemmThreeLevelsAgree \
           SyrkHerkExactEveryOption; do gpu_tests+="${gpu_tests:+:}VbatchedBlas/$i.$t"; done
done
for v in fused both; do
  (export BATCHSOLVE_TUNING_FILE=$out/sm90-gemm-$v.json
   step gpu-tests-$v 12 "$run" batchsolve_vbatched_blas_test --gtest_filter="$gpu_tests")
done
skewed() {  # skewed NAME TABLE|-: the skewed batch (90 % of problems <= 32, 10 % near x) at x = 512, 256
  local cmd=("$run" tester "${base[@]}" --setups gemm_skewed --precision d,s --n 512,256 --ref cublas-grouped --json "$out/skewed-$1.json")
  if [[ $2 == - ]]; then step "skewed-$1" 6 "${cmd[@]}"
  else (export BATCHSOLVE_TUNING_FILE=$2; step "skewed-$1" 6 "${cmd[@]}"); fi
}
skewed shipped -
skewed fused "$out/sm90-gemm-fused.json"
skewed both "$out/sm90-gemm-both.json"
# c and z: no grouped peer in CUDA 13.0 (one cuBLAS call per problem over 16 streams)
step complex-shipped 8 "$run" tester "${base[@]}" --setups gemm --ref cublas --precision z,c --n 512,256 --json "$out/complex-shipped.json"
(export BATCHSOLVE_TUNING_FILE=$out/sm90-gemm-streams.json
 step complex-streams 8 "$run" tester "${base[@]}" --setups gemm --ref cublas --precision z,c --n 512,256 --json "$out/complex-streams.json")

echo "---- gemm-binned summary ($((SECONDS - start)) s of $budget; $(sed -n 2p "$out/gpu.txt" | cut -d, -f1); commit $commit)"
grep -h "warm\|compiled\|refused" "$out/warmup.log" "$out/check.log" 2>/dev/null | tail -2
for f in shipped streams sorted both fused fused-sorted shipped-again skewed-shipped skewed-fused skewed-both \
         complex-shipped complex-streams; do
  echo "-- $f"; grep -E "^ *gemm_vbatched|targets:" "$out/$f.log" 2>/dev/null
done
for v in fused both; do echo "-- gpu-tests-$v"; grep -hE "^\[  (PASSED|FAILED) " "$out/gpu-tests-$v.log" 2>/dev/null; done
cat "$out/skipped.txt" 2>/dev/null
exit 0
