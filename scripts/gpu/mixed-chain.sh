#!/usr/bin/env bash
# posv_mixed (d): the tensor-core factor's tiled leaf and the fused refinement pass, each beside the
# shipped table and beside the lookahead + block-row designs (mixed-lookahead.sh's "both"), on one H200
# in TOPIC_BUDGET_S seconds (150 by default). Every step is its own tester process with --ref cusolver
# (FP64 Xpotrf + Xpotrs on the same matrix and stream: each row's ratio is like for like within its
# process), A = Q diag(lambda) Q^T, seed 36, one right-hand side, median of 3 after a warm-up, cond
# 1e2..1e8 in every step, the backward error of every row in its error column (units of
# u max(sqrt n, 4)). Four tables (the shipped one with a patch in every posv_mixed entry):
#   shipped  libsolver/tuning/sm90-large.json as committed (cuSOLVER SPOTRF leaves)
#   leaf     tiled_leaf: each diagonal leaf (order <= 512) factored and inverted by one launch of
#            32 x 32 tile tasks in ticket order (replaces SPOTRF + identity + STRSM; implies the
#            inverse panel solve)
#   both     lookahead + update_width 2048 + solve_rows 128 (mixed-lookahead.sh's)
#   all      both + tiled_leaf
# and in each step the refinement separate (design suffix /fused0) beside fused (/fused8: after M^-1,
# one launch for A (x + d) from the stored triangle, one for x += d, r = b - A x, its conversion with
# the overflow test and both norms, one read a pass; 8 tile rows of 32 per block of the product).
# Steps, most important first, each cut to the time left (3 s kept for the summary):
#   check          the all table at n = 1500 and 5000 (uneven tiles and leaves), cond 1e2, every
#                  tensor-core precision, fused: the error column
#   <table>-8192   auto (the table's FP32 chain at 8192) and fp16_split/classical, each /fused0 and
#                  /fused8, and fp16/auto/fused8; shipped also with DSgesv/DHgesv (the fastest IRS)
#   leaf-alone     n = 512 and 256 (one leaf: the factor is the scaling copy and that leaf), shipped vs
#                  leaf: the factor ms of fp16/classical (the leaf's time alone, within one graph replay)
#   <table>-16384  auto/fused0, auto/fused8 (the table's split-FP16 chain), fp16/auto/fused8
#   gtest-all, gtest-leaf  the large suite's CUDA posv_mixed tests under those tables (tiled leaves
#                  at leaf orders 128 and 384 with n = 1300; the fused pass through the all table and
#                  through the option: FusedPasses*, against the separate primitives)
#   both-16384     the both table (mixed-lookahead.sh measures it too, in its own call step)
# Writes $OUT/mixed-chain/ (gpu.txt, commit.txt, date.txt, tables/, <step>.json/.log, targets-*.json,
# targets.json, summary.md). Run from the repository root with the bundle unpacked at /tmp/bundle
# (BUILD_DIR=build-gpu: the build tree's programs, a dry run here).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}/mixed-chain; mkdir -p "$out/tables"
bin() { if [[ -n ${BUILD_DIR:-} ]]; then echo "$BUILD_DIR/$2"; else echo "/tmp/bundle/run $1"; fi; }
read -r -a tester <<< "$(bin tester validation/tester)"
read -r -a gtest <<< "$(bin batchsolve_large_test libsolver/tests/large/batchsolve_large_test)"
budget=${TOPIC_BUDGET_S:-150}; start=$SECONDS
left() { echo $((budget - (SECONDS - start))); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.total --format=csv > "$out/gpu.txt" 2>&1
echo "${BATCHSOLVE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}" > "$out/commit.txt"
date -u +%Y-%m-%dT%H:%M:%SZ > "$out/date.txt"
export BATCHSOLVE_CACHE_DIR=${BATCHSOLVE_CACHE_DIR:-/tmp/mixed-chain-cache}; mkdir -p "$BATCHSOLVE_CACHE_DIR"

python3 - libsolver/tuning/sm90-large.json "$out/tables" <<'PY'
import copy, json, os, sys
shipped = json.load(open(sys.argv[1]))
both = {"lookahead": True, "update_width": 2048, "solve_rows": 128}
patches = {
    "leaf": {"tiled_leaf": True},
    "both": both,
    "all": dict(both, tiled_leaf=True),
    "all-fused": dict(both, tiled_leaf=True, fused_pass=8),  # the gtest: the fused pass by the table
}
for name, patch in patches.items():
    t = copy.deepcopy(shipped)
    for e in t["entries"]:
        if e["routine"] == "posv_mixed":
            e["best"]["config"].update(patch)
            e["provenance"] = "candidate (%s), not measured: %s" % (json.dumps(patch), e["provenance"])
    json.dump(t, open(os.path.join(sys.argv[2], name + ".json"), "w"), indent=1)
PY
tables=$out/tables; [[ $tables != /* ]] && tables=$PWD/$tables
table_of() { [[ $1 == shipped ]] && echo - || echo "$tables/$1.json"; }

# step NAME LIMIT MIN TABLE ARGS...: the tester for at most LIMIT s (or what is left) with TABLE
# (shipped or a candidate's name); skipped when fewer than MIN s are left.
step() {
  local name=$1 limit=$2 min=$3 table; table=$(table_of "$4"); shift 4
  local l=$(( $(left) - 3 ))
  (( l < min )) && { echo "$name: skipped ($l s left)" | tee -a "$out/skipped.txt"; return; }
  (( limit > l )) && limit=$l
  echo "== $name ($limit s)"
  local env_table=(); [[ $table != - ]] && env_table=(env "BATCHSOLVE_TUNING_FILE=$table")
  timeout -k 2 "$limit" "${env_table[@]}" "${tester[@]}" --warmup 1 --json "$out/$name.json" \
    --targets-out "$out/targets-$name.json" "$@" > "$out/$name.log" 2>&1
  echo "   rc $? after $((SECONDS - start)) s"
  tail -n 2 "$out/$name.log"
}
# run_gtest NAME LIMIT TABLE: the large suite's CUDA posv_mixed tests with TABLE, into NAME.log.
run_gtest() {
  local name=$1 limit=$2 table; table=$(table_of "$3")
  local l=$(( $(left) - 3 ))
  (( l < 6 )) && { echo "$name: skipped ($l s left)" | tee -a "$out/skipped.txt"; return; }
  (( limit > l )) && limit=$l
  local env_table=(); [[ $table != - ]] && env_table=(env "BATCHSOLVE_TUNING_FILE=$table")
  echo "== $name ($limit s)"
  timeout -k 2 "$limit" "${env_table[@]}" "${gtest[@]}" --gtest_filter='PosvMixed/1.*' > "$out/$name.log" 2>&1
  echo "   rc $? after $((SECONDS - start)) s"; grep -E "PASSED|FAILED|SKIPPED" "$out/$name.log" | tail -4
}
posv=(--routine posv_mixed --precision d --repeat 3 --seed 36 --targets scripts/gpu/mixed-targets.json)
d8192=auto/fused0,auto/fused8,fp16_split/classical/fused0,fp16_split/classical/fused8,fp16/auto/fused8
d16384=auto/fused0,auto/fused8,fp16/auto/fused8
irs=cusolver,cusolver-dsgesv,cusolver-dhgesv

step check 10 6 all "${posv[@]}" --n 1500,5000 --cond 100 --ref cusolver \
  --designs auto/fused8,fp16_split/classical/fused8,fp16/gmres/fused8,tf32/classical/fused8,bf16/classical/fused8,fp16_split/classical/fused0
step shipped-8192 13 8 shipped "${posv[@]}" --n 8192 --designs "$d8192" --ref "$irs"
step leaf-8192 10 6 leaf "${posv[@]}" --n 8192 --designs "$d8192" --ref cusolver
step all-8192 10 6 all "${posv[@]}" --n 8192 --designs "$d8192" --ref cusolver
step both-8192 9 6 both "${posv[@]}" --n 8192 --designs "$d8192" --ref cusolver
step leaf-alone-shipped 5 4 shipped "${posv[@]}" --n 256,512 --cond 100 --designs fp16/classical/fused0,fp16/classical/fused8 --ref cusolver
step leaf-alone-leaf 5 4 leaf "${posv[@]}" --n 256,512 --cond 100 --designs fp16/classical/fused0,fp16/classical/fused8 --ref cusolver
step shipped-16384 20 12 shipped "${posv[@]}" --n 16384 --designs "$d16384" --ref "$irs"
step leaf-16384 14 10 leaf "${posv[@]}" --n 16384 --designs "$d16384" --ref cusolver
step all-16384 14 10 all "${posv[@]}" --n 16384 --designs "$d16384" --ref cusolver
run_gtest gtest-all 16 all-fused
run_gtest gtest-leaf 10 leaf
step both-16384 14 10 both "${posv[@]}" --n 16384 --designs "$d16384" --ref cusolver

source scripts/gpu/lib/step-targets.sh
merge_step_targets "$out"
python3 - "$out" <<'PY' | tee "$out/summary.md"
import glob, json, os, sys
out = sys.argv[1]
print("| step | n | variant | ms | Xpotrf+Xpotrs ms | ratio | fastest IRS / ours | factor ms | refine ms | passes | ms a pass | path | error | status |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
f3 = lambda v: "%.3f" % v if isinstance(v, (int, float)) else "-"
for f in sorted(glob.glob(os.path.join(out, "*.json"))):
    name = os.path.basename(f)[:-5]
    if name.startswith("targets"):
        continue
    try:
        rows = json.load(open(f)).get("rows", [])
    except Exception as e:
        print("|", name, "| unreadable:", e, "|")
        continue
    for r in rows:
        refs = r.get("refs", {})
        cu, irs = refs.get("cusolver", {}), refs.get("cusolver-irs-best", {})
        ms, cu_ms, irs_ms = r.get("time_ms"), cu.get("time_ms"), irs.get("time_ms")
        det = r.get("detail", {}) or {}
        steps = [s for s in det.get("steps") or [] if isinstance(s, dict)]
        fac = sum(s.get("factor_ms", 0) for s in steps) if steps else None
        ref = sum(s.get("refine_ms", 0) for s in steps) if steps else None
        refined = [s for s in steps if s.get("path") != "double_direct"]
        passes = sum(s.get("iterations", 0) + 1 for s in refined if s.get("refine_ms", 0) > 0)
        per = sum(s.get("refine_ms", 0) for s in refined) / passes if passes else None
        err = r.get("error")
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            name, r.get("n"), r.get("variant"), f3(ms), f3(cu_ms), f3(cu_ms / ms) if cu_ms and ms else "-",
            f3(irs_ms / ms) if irs_ms and ms else "-", f3(fac), f3(ref), passes or "-", f3(per),
            "->".join(s.get("path", "?") for s in steps) or det.get("path", "-"),
            "%.3g" % err if isinstance(err, (int, float)) else err, str(r.get("note", r.get("status")))[:90]))
PY
echo "mixed-chain: done after $((SECONDS - start)) s"
exit 0
