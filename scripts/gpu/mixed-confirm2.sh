#!/usr/bin/env bash
# posv_mixed (d) at n = 16384: the shipped table (M^-1 by block rows of 128 in the split-FP16 entry, n >
# 12288) beside the table before it, on one H200 in TOPIC_BUDGET_S seconds (110 by default): the
# confirmation of what mixed-lookahead.sh measured (rows against shipped). Each step its own
# `tester --routine posv_mixed --precision d --repeat 5 --warmup 1 --seed 36 --ref cusolver` process (FP64
# Xpotrf + Xpotrs on the same matrix and stream, so every row's ratio is like for like), A = Q diag(lambda)
# Q^T, one right-hand side, design auto (the table's chain), cond 1e2, 1e4, 1e6, 1e8 in each process:
#   previous   the shipped libsolver/tuning/sm90-large.json with solve_rows 0 in every posv_mixed entry
#              (M^-1 by cuBLAS STRSV: the posv_mixed entries of 07b8848; tables/previous.json, by BATCHSOLVE_TUNING_FILE)
#   adopted    the shipped table as committed (the embedded one)
# Steps, most important first, each cut to the time left:
#   previous-1, adopted-1, previous-2, adopted-2   interleaved, so drift between processes falls on both
#              tables alike; each keeps GTEST_RESERVE_S (52) s for the two test steps
#   gtest-adopted   the large suite's CUDA posv_mixed tests (PosvMixed/1.*, as mixed-lookahead.sh's gtest
#              steps) with the shipped table: its orders (n <= 2000) take the n <= 12288 entry
#   gtest-rows-all  the same with solve_rows 128 in every posv_mixed entry (tables/rows-all.json), so the
#              tests' tensor-core factors at leaves 128 and 384, one and several right-hand sides, and the
#              fused passes reach the block-row M^-1
#   adopted-fused   if >= 10 s are left: the shipped table, designs auto/fused0 and auto/fused8 (the fused
#              classical pass beside it on the adopted M^-1; no target)
# targets.json (by this script): per cond, adopted faster than previous (mean of the two rounds each:
# speedup:previous > 1), the adopted rows' error <= 2 (units of u max(sqrt n, 4): the stopping test), and
# every test of each gtest step passed. Expected about 60 s: a 16384 step about 6 s, a gtest step about
# 12 s, adopted-fused about 8 s. Writes $OUT/mixed-confirm2/ (gpu.txt, commit.txt, date.txt, tables/,
# <step>.json/.log, targets.json, summary.md). Run from the repository root with the bundle unpacked at
# /tmp/bundle (BUILD_DIR=build-gpu: the build tree's programs, a dry run here).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}/mixed-confirm2; mkdir -p "$out/tables"
bin() { if [[ -n ${BUILD_DIR:-} ]]; then echo "$BUILD_DIR/$2"; else echo "/tmp/bundle/run $1"; fi; }
read -r -a tester <<< "$(bin tester validation/tester)"
read -r -a gtest <<< "$(bin batchsolve_large_test libsolver/tests/large/batchsolve_large_test)"
budget=${TOPIC_BUDGET_S:-110}; start=$SECONDS
reserve=${GTEST_RESERVE_S:-52}
left() { echo $((budget - (SECONDS - start))); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.total --format=csv > "$out/gpu.txt" 2>&1
echo "${BATCHSOLVE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}" > "$out/commit.txt"
date -u +%Y-%m-%dT%H:%M:%SZ > "$out/date.txt"
export BATCHSOLVE_CACHE_DIR=${BATCHSOLVE_CACHE_DIR:-/tmp/mixed-confirm2-cache}; mkdir -p "$BATCHSOLVE_CACHE_DIR"

# The tables: previous (solve_rows 0 everywhere) and rows-all (solve_rows 128 everywhere), from the shipped
# one with nothing else changed; the script stops if the shipped split-FP16 entry lacks solve_rows 128.
python3 - libsolver/tuning/sm90-large.json "$out/tables" <<'PY' || exit 1
import copy, json, os, sys
shipped = json.load(open(sys.argv[1]))
mixed = [e for e in shipped["entries"] if e["routine"] == "posv_mixed"]
split = [e for e in mixed if e["best"]["config"].get("factor") == "fp16_split"]
if not split or any(e["best"]["config"].get("solve_rows", 0) != 128 for e in split):
    sys.exit("the shipped split-FP16 posv_mixed entry does not have solve_rows 128: nothing to confirm")
for name, rows in (("previous", 0), ("rows-all", 128)):
    t = copy.deepcopy(shipped)
    for e in t["entries"]:
        if e["routine"] == "posv_mixed":
            e["best"]["config"]["solve_rows"] = rows
            e["provenance"] = "%s (solve_rows %d in every posv_mixed entry): %s" % (name, rows, e["provenance"])
    json.dump(t, open(os.path.join(sys.argv[2], name + ".json"), "w"), indent=1)
    print("tables/%s.json: posv_mixed entries n <= %s" % (name, ", ".join(str(e["n"]) for e in t["entries"]
                                                                      if e["routine"] == "posv_mixed")))
PY
tables=$out/tables; [[ $tables != /* ]] && tables=$PWD/$tables
table_of() { [[ $1 == adopted ]] && echo - || echo "$tables/$1.json"; }

# step NAME LIMIT MIN KEEP TABLE ARGS...: the tester for at most LIMIT s with TABLE (adopted: the
# embedded one), KEEP s (and 3 for the summary) left for the steps after it; skipped below MIN s.
step() {
  local name=$1 limit=$2 min=$3 keep=$4 table; table=$(table_of "$5"); shift 5
  local l=$(( $(left) - 3 - keep ))
  (( l < min )) && { echo "$name: skipped ($l s left)" | tee -a "$out/skipped.txt"; return; }
  (( limit > l )) && limit=$l
  echo "== $name ($limit s)"
  local env_table=(); [[ $table != - ]] && env_table=(env "BATCHSOLVE_TUNING_FILE=$table")
  timeout -k 2 "$limit" "${env_table[@]}" "${tester[@]}" --warmup 1 --json "$out/$name.json" "$@" > "$out/$name.log" 2>&1
  echo "   rc $? after $((SECONDS - start)) s"
  tail -n 1 "$out/$name.log"
}
# run_gtest NAME LIMIT KEEP TABLE: the large suite's CUDA posv_mixed tests with TABLE, into NAME.log.
run_gtest() {
  local name=$1 limit=$2 keep=$3 table; table=$(table_of "$4")
  local l=$(( $(left) - 3 - keep ))
  (( l < 6 )) && { echo "$name: skipped ($l s left)" | tee -a "$out/skipped.txt"; return; }
  (( limit > l )) && limit=$l
  local env_table=(); [[ $table != - ]] && env_table=(env "BATCHSOLVE_TUNING_FILE=$table")
  echo "== $name ($limit s)"
  timeout -k 2 "$limit" "${env_table[@]}" "${gtest[@]}" --gtest_filter='PosvMixed/1.*' > "$out/$name.log" 2>&1
  echo "   rc $? after $((SECONDS - start)) s"; grep -E "PASSED|FAILED|SKIPPED" "$out/$name.log" | tail -4
}
posv=(--routine posv_mixed --precision d --repeat 5 --seed 36 --n 16384 --ref cusolver)

step previous-1 14 8 "$reserve" previous "${posv[@]}" --designs auto
step adopted-1 14 8 "$reserve" adopted "${posv[@]}" --designs auto
step previous-2 14 8 "$reserve" previous "${posv[@]}" --designs auto
step adopted-2 14 8 "$reserve" adopted "${posv[@]}" --designs auto
run_gtest gtest-adopted 25 25 adopted
run_gtest gtest-rows-all 25 0 rows-all
step adopted-fused 12 10 0 adopted "${posv[@]}" --designs auto/fused0,auto/fused8

python3 - "$out" <<'PY' | tee "$out/summary.md"
import json, os, re, statistics, sys
out = sys.argv[1]
def rows(step):
    try:
        return json.load(open(os.path.join(out, step + ".json"))).get("rows", [])
    except Exception:
        return []
conds = ["cond1e2", "cond1e4", "cond1e6", "cond1e8"]
steps = ["previous-1", "adopted-1", "previous-2", "adopted-2"]
table = {s: {r.get("variant"): r for r in rows(s)} for s in steps}
fmt = lambda v: "%.2f" % v if isinstance(v, (int, float)) else "-"
print("posv_mixed d, n = 16384, design auto, ms (median of 5; Xpotrf+Xpotrs / ours in brackets)\n")
print("| cond | " + " | ".join(steps) + " | previous / adopted (means) | Xpotrf+Xpotrs ms | adopted error |")
print("|---|" + "---|" * (len(steps) + 3))
targets = []
def target(variant, metric, op, value, measured, met, status, step, **extra):
    t = {"routine": "posv_mixed", "precision": "d", "n": 16384, "batch": 1, "variant": variant,
         "target": {"routine": "posv_mixed", "precision": "d", "n": 16384, "variant": variant, "metric": metric,
                    "op": op, "value": value},
         "measured": measured, "met": met, "row_status": status, "step": step}
    t.update(extra)
    targets.append(t)
for c in conds:
    t = {s: table[s].get(c, {}) for s in steps}
    ms = {s: t[s].get("time_ms") if t[s].get("status") == "ok" else None for s in steps}
    prev = [ms[s] for s in steps if s.startswith("previous") and ms[s]]
    adop = [ms[s] for s in steps if s.startswith("adopted") and ms[s]]
    ratio = statistics.mean(prev) / statistics.mean(adop) if prev and adop else None
    peers = [t[s].get("refs", {}).get("cusolver", {}).get("time_ms") for s in steps]
    peers = [p for p in peers if p]
    errs = [t[s].get("error") for s in steps if s.startswith("adopted") and isinstance(t[s].get("error"), (int, float))]
    cells = []
    for s in steps:
        peer = t[s].get("refs", {}).get("cusolver", {}).get("time_ms")
        cells.append(fmt(ms[s]) + (" (%.2f)" % (peer / ms[s]) if ms[s] and peer else ""))
    print("| %s | %s | %s | %s | %s |" % (c, " | ".join(cells), "%.3f" % ratio if ratio else "-",
                                       "%.2f-%.2f" % (min(peers), max(peers)) if peers else "-",
                                       "%.3g" % max(errs) if errs else "-"))
    status = "ok" if ratio else "no row"
    target(c, "speedup:previous", ">", 1.0, ratio, bool(ratio and ratio > 1.0), status, ",".join(steps),
           rounds={s: ms[s] for s in steps})
    target(c, "error", "<=", 2.0, max(errs) if errs else None, bool(errs and max(errs) <= 2.0),
           "ok" if errs else "no row", "adopted-1,adopted-2")
for g in ("gtest-adopted", "gtest-rows-all"):
    try:
        text = open(os.path.join(out, g + ".log")).read()
    except OSError:
        text = ""
    total = re.search(r"Running (\d+) tests? from", text)
    passed = re.search(r"\[  PASSED  \] (\d+) tests?", text)
    failed = re.search(r"\[  FAILED  \] (\d+) tests?", text)
    total = int(total.group(1)) if total else None
    passed = int(passed.group(1)) if passed else 0
    met = bool(total and passed == total and not failed)
    if not text:
        said = "not run"
    else:
        said = "%d of %s passed" % (passed, total)
        said += ", %s failed" % failed.group(1) if failed else ("" if met else " (did not finish)")
    print("\n%s: %s" % (g, said))
    target("PosvMixed/1.*", "gtest_passed", "==", total, passed, met, "ok" if text else "no row", g)
fused = {r.get("variant"): r for r in rows("adopted-fused")}
if fused:
    print("\nadopted-fused (ms): " + ", ".join("%s %s" % (v, fmt(r.get("time_ms"))) for v, r in fused.items()))
json.dump(targets, open(os.path.join(out, "targets.json"), "w"), indent=1)
print("\ntargets.json: %d of %d met" % (sum(1 for t in targets if t["met"]), len(targets)))
PY
echo "mixed-confirm2: done after $((SECONDS - start)) s"
exit 0
