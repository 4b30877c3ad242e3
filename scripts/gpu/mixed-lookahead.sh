#!/usr/bin/env bash
# posv_mixed (d) with the tensor-core factor right-looking with lookahead and with M^-1 by block rows,
# each beside the shipped table and both together, on one H200 in TOPIC_BUDGET_S seconds (170 by
# default). Four tables, each step its own tester process (--ref cusolver: FP64 Xpotrf + Xpotrs on the
# same matrix and stream, so every row's ratio is like for like within its process), A = Q diag(lambda)
# Q^T, seed 36, one right-hand side, median of 3 after a warm-up, cond 1e2..1e8 in every step:
#   shipped    libsolver/tuning/sm90-large.json as committed (recursive factor; M^-1 by cuBLAS STRSV)
#   lookahead  every posv_mixed entry with lookahead true, update_width 2048 (the factor right-looking
#              in blocks of the leaf: each block's SPOTRF leaf, leaf inverse, panel solve and FP16
#              copy on a second stream under the previous block's trailing GEMMs)
#   rows       every posv_mixed entry with solve_rows 128 (M^-1 for one right-hand side in two launches,
#              block rows of 128 in ticket order, S inside; the diagonal blocks' inverses formed after
#              the factor)
#   both       lookahead and rows together
# Steps, most important first, each cut to the time left (3 s kept for the summary):
#   check          the both table with panel_solve inverse in every entry (the n <= 12288 entry ships
#                  trsm) at n = 1500 and 5000 (uneven blocks, a last block row cut by n), cond 1e2, every
#                  tensor-core precision: the error column (units of u max(sqrt n, 4)); the gtest steps
#                  below run the entry's trsm panel solve
#   <table>-16384  designs auto (the table's chain: split FP16, automatic correction, FP64 fallback),
#                  auto/budget300 (the same with the cost bound at 300 % of the factor time instead of
#                  130: the bound scales with the low factor's time, the FP64 fallback's cost does not,
#                  so a faster factor gives way to the fallback sooner) and fp16/auto (one-product
#                  FP16); shipped also with cuSOLVER's DSgesv and DHgesv (the
#                  fastest IRS at every cond in team call 2 of 2026-12-03: results/2026-12-03-h200-e28e399-
#                  large-vendor-graph-confirm); targets by the tester (targets-<step>.json)
#   <table>-8192   designs auto (the table's FP32 chain: a same-process control), fp16_split/classical,
#                  fp16_split/gmres/budget300 and fp16/auto (the tensor-core factors with each table's
#                  blocking)
#   gtest-both, gtest-rows  the large suite's CUDA posv_mixed tests under those tables (every
#                  tensor-core factor at leaves 128 and 384, n = 1300, one and several right-hand sides)
#   both-leaf-16384   the both table with blocks (leaves) of 1024 and 256: fewer chain steps against
#                  a shorter step
#   both-w1024-16384  the both table with update_width 1024
# A step's conds run 1e2, 1e4, 1e6, 1e8 in one process (the tester's order); each limit leaves the
# 1e8 rows (the FP64 fallback: the slowest) room, from call 2's times (16384: about 1.5 s a cond and
# design with the IRS peers, 8192 a third of it). Writes $OUT/mixed-lookahead/ (gpu.txt, commit.txt,
# date.txt, tables/, <step>.json/.log, targets-*.json, targets.json, summary.md). Run from the
# repository root with the bundle unpacked at /tmp/bundle (BUILD_DIR=build-gpu: the build tree's
# programs, a dry run here).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}/mixed-lookahead; mkdir -p "$out/tables"
bin() { if [[ -n ${BUILD_DIR:-} ]]; then echo "$BUILD_DIR/$2"; else echo "/tmp/bundle/run $1"; fi; }
read -r -a tester <<< "$(bin tester validation/tester)"
read -r -a gtest <<< "$(bin batchsolve_large_test libsolver/tests/large/batchsolve_large_test)"
budget=${TOPIC_BUDGET_S:-170}; start=$SECONDS
left() { echo $((budget - (SECONDS - start))); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.total --format=csv > "$out/gpu.txt" 2>&1
echo "${BATCHSOLVE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}" > "$out/commit.txt"
date -u +%Y-%m-%dT%H:%M:%SZ > "$out/date.txt"
export BATCHSOLVE_CACHE_DIR=${BATCHSOLVE_CACHE_DIR:-/tmp/mixed-lookahead-cache}; mkdir -p "$BATCHSOLVE_CACHE_DIR"

# The candidate tables: the shipped one with the patch in every posv_mixed entry, nothing else changed.
python3 - libsolver/tuning/sm90-large.json "$out/tables" <<'PY'
import copy, json, os, sys
shipped = json.load(open(sys.argv[1]))
patches = {
    "lookahead": {"lookahead": True, "update_width": 2048},
    "rows": {"solve_rows": 128},
    "both": {"lookahead": True, "update_width": 2048, "solve_rows": 128},
    "both-w1024": {"lookahead": True, "update_width": 1024, "solve_rows": 128},
    "both-inverse": {"lookahead": True, "update_width": 2048, "solve_rows": 128, "panel_solve": "inverse"},
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
# gtest NAME LIMIT TABLE: the large suite's CUDA posv_mixed tests with TABLE, into NAME.log.
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
d16384=auto,auto/budget300,fp16/auto
d8192=auto,fp16_split/classical,fp16_split/gmres/budget300,fp16/auto
irs=cusolver,cusolver-dsgesv,cusolver-dhgesv

step check 10 6 both-inverse "${posv[@]}" --n 1500,5000 --cond 100 --ref cusolver \
  --designs auto,fp16_split/classical,fp16/gmres,tf32/classical,bf16/classical
step shipped-16384 24 14 shipped "${posv[@]}" --n 16384 --designs "$d16384" --ref "$irs"
step both-16384 15 10 both "${posv[@]}" --n 16384 --designs "$d16384" --ref cusolver
step lookahead-16384 15 10 lookahead "${posv[@]}" --n 16384 --designs "$d16384" --ref cusolver
step rows-16384 15 10 rows "${posv[@]}" --n 16384 --designs "$d16384" --ref cusolver
step shipped-8192 12 8 shipped "${posv[@]}" --n 8192 --designs "$d8192" --ref "$irs"
step both-8192 9 6 both "${posv[@]}" --n 8192 --designs "$d8192" --ref cusolver
step lookahead-8192 9 6 lookahead "${posv[@]}" --n 8192 --designs "$d8192" --ref cusolver
step rows-8192 9 6 rows "${posv[@]}" --n 8192 --designs "$d8192" --ref cusolver
run_gtest gtest-both 16 both
run_gtest gtest-rows 10 rows
step both-leaf-16384 12 10 both "${posv[@]}" --n 16384 --designs auto/leaf1024,auto/leaf256 --ref cusolver
step both-w1024-16384 10 8 both-w1024 "${posv[@]}" --n 16384 --designs auto --ref cusolver

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
echo "mixed-lookahead: done after $((SECONDS - start)) s"
exit 0
