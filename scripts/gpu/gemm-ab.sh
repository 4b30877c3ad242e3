#!/usr/bin/env bash
# Two candidate d GEMM tables against the shipped sm90-gemm.json, interleaved in one run so that the
# drift between processes is measured beside them: shipped, cand1, shipped, cand2, shipped (one tester
# process each, the same arguments as the final rows: 2000 problems, seed 7, median of 5 after one
# warm-up, _max and checked levels, cuBLAS grouped in the same process, the error column against
# cuBLAS per problem), d only, uniform batches (m, n, k in [1, x]) at x = 512, 256 and the skewed batch
# (90 % of problems <= 32) at x = 512, 256. The candidates change only d entries of the shipped table:
#   cand1  class 256 on the cp.async ring (64x32x8 2x2 min 6, stages 3, copy_offsets 3: +3.4 % at x = 256
#          in results/2026-12-04-h200-07b8848-gemm-rows) and the top class on 64x64x16 2x2 min 3 stages 3
#          (the tile sweep's 26.0 against 24.6 TFLOP/s for the shipped 64x64x8 min 4 at x = 512)
#   cand2  the same class 256, the top class on 128x64x8 4x2 min 2 stages 4 (the sweep's 26.0)
# Every kernel of the three tables' plans (batchsolve-warmup --list under each) is compiled first on
# every core. targets.json (written here, one entry per candidate): met when the candidate's x = 512
# uniform _max time beats every shipped repeat's by >= 5 % (shipped / candidate >= 1.05 for all three),
# is not slower than any shipped repeat at x = 256 (ratio >= 1.00), every row of its process is ok
# (error within the tester's tolerance) and its rows ran the candidate's tiles (the row's config);
# the checked level and the skewed batch are reported beside it, not judged.
# Writes $OUT/gemm-ab/; TOPIC_BUDGET_S (default 100) s. BUILD_DIR=build-gpu: a dry run from the build
# tree without a GPU (the tester then runs the CPU backend, so the rows shrink to x = 32, batch 20: the
# tables, the manifest and every step's plumbing down to targets.json are exercised, nothing is judged).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}/gemm-ab; mkdir -p "$out"
batch=2000 sizes=512,256
if [[ -n ${BUILD_DIR:-} ]]; then  # dry run: the build tree's executables stand in for the bundle's
  run=$out/run-from-build
  printf '#!/usr/bin/env bash\nname=$1; shift\nexe=$(find "%s" -type f -name "$name" -perm -u+x -not -path "*/CMakeFiles/*" | head -1)\n[[ -n $exe ]] || exit 127\nexec "$exe" "$@"\n' \
    "$(cd "$BUILD_DIR" && pwd)" > "$run"
  chmod +x "$run"
  batch=20 sizes=32  # a CPU-backend row of a second, not minutes
else
  run=/tmp/bundle/run
fi
budget=${TOPIC_BUDGET_S:-100}; start=$SECONDS
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

# the tables: the shipped one as read (every process reads its table from a file, the same way) and the
# two candidates made from it; candidates.json names what each changes
python3 - libsolver/tuning/sm90-gemm.json "$out" <<'EOF' || { echo "gemm-ab: the candidate tables failed" >&2; exit 1; }
import copy, json, sys
table, out = json.load(open(sys.argv[1])), sys.argv[2]
TOP = 2147483647
ring256 = {"blk_m": 64, "blk_n": 32, "blk_k": 8, "dim_x": 2, "dim_y": 2, "tensor_cores": True, "min_blocks_per_sm": 6,
           "stages": 3, "copy_offsets": 3, "tc_row": 4}
top1 = {"blk_m": 64, "blk_n": 64, "blk_k": 16, "dim_x": 2, "dim_y": 2, "tensor_cores": True, "min_blocks_per_sm": 3,
        "stages": 3, "copy_offsets": 3, "dmma16": 1, "tc_row": 4}
top2 = {"blk_m": 128, "blk_n": 64, "blk_k": 8, "dim_x": 4, "dim_y": 2, "tensor_cores": True, "min_blocks_per_sm": 2,
        "stages": 4, "copy_offsets": 3, "dmma16": 1, "tc_row": 4}
candidates = {
    "cand1": {"d": {"256": ring256, str(TOP): top1},
              "what": "d class 256 on the cp.async ring (64x32x8 2x2 min 6 stages 3), top class 64x64x16 2x2 min 3 stages 3"},
    "cand2": {"d": {"256": ring256, str(TOP): top2},
              "what": "d class 256 on the cp.async ring (64x32x8 2x2 min 6 stages 3), top class 128x64x8 4x2 min 2 stages 4"},
}
json.dump(table, open(f"{out}/sm90-gemm-shipped.json", "w"), indent=1)
record = {}
for name, cand in candidates.items():
    t = copy.deepcopy(table)
    changed = {}
    for e in t["entries"]:
        c = cand.get(e["precision"], {}).get(str(e["n"]))
        if e["routine"] != "gemm_vbatched" or c is None:
            continue
        changed[f"{e['precision']} {e['n']}"] = {"shipped": e["best"]["config"], "candidate": c}
        e["best"]["config"] = dict(c)
        e["provenance"] = f"{name} of scripts/gpu/gemm-ab.sh ({cand['what']}), in place of: " + e["provenance"]
    if len(changed) != sum(len(v) for k, v in cand.items() if k != "what"):
        sys.exit(f"{name}: an entry it changes is not in the shipped table")
    json.dump(t, open(f"{out}/sm90-gemm-{name}.json", "w"), indent=1)
    record[name] = {"table": f"sm90-gemm-{name}.json", "what": cand["what"], "entries": changed}
json.dump(record, open(f"{out}/candidates.json", "w"), indent=1)
EOF
# every kernel the rows run: the launcher's own plan under each table (d, n x n; batchsolve-warmup --list
# reads the table through the library, so a table that does not parse stops here), plus each changed
# entry whole-batch and listed
for t in shipped cand1 cand2; do
  BATCHSOLVE_TUNING_FILE=$out/sm90-gemm-$t.json "$run" batchsolve-warmup --families gemm --precisions d --arch 90 --list \
    2> "$out/list-$t.log" | grep '^gemm d n n ' > "$out/list-$t.manifest"
  [[ -s $out/list-$t.manifest ]] || { echo "gemm-ab: no kernel plan under sm90-gemm-$t.json (list-$t.log)" >&2; cat "$out/list-$t.log" >&2; exit 1; }
done
python3 - "$out/candidates.json" > "$out/changed.manifest" <<'EOF'
import json, sys
for cand in json.load(open(sys.argv[1])).values():
    for listed in (0, 1):
        for key, e in cand["entries"].items():
            print(f"gemm {key.split()[0]} n n full 0 0 {listed} {json.dumps(e['candidate'], separators=(',', ':'))}")
EOF
cat "$out"/list-{shipped,cand1,cand2}.manifest "$out/changed.manifest" | awk '!seen[$0]++' > "$out/ab.manifest"
step check 5 "$run" batchsolve-warmup --kernels "$out/ab.manifest" --check-only
step warmup 20 "$run" batchsolve-warmup --kernels "$out/ab.manifest" --threads "$(nproc)"

# the interleave: one tester process per table, the shipped table first, between and last
base=(--routine gemm_vbatched --batch "$batch" --repeat 5 --warmup 1 --seed 7)
order=(shipped-1:shipped cand1:cand1 shipped-2:shipped cand2:cand2 shipped-3:shipped)
for spec in "${order[@]}"; do
  name=${spec%%:*} table=${spec##*:}
  (export BATCHSOLVE_TUNING_FILE=$out/sm90-gemm-$table.json
   step "$name" 12 "$run" tester "${base[@]}" --setups gemm,gemm_skewed --precision d --n "$sizes" --ref cublas-grouped \
     --json "$out/$name.json")
done
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > "$out/gpu-end.txt" 2>&1

# targets.json and ab.md: each candidate against every shipped repeat
python3 - "$out" "$commit" <<'EOF'
import datetime, json, math, os, sys
out, commit = sys.argv[1], sys.argv[2]
cands = json.load(open(f"{out}/candidates.json"))
shipped_table = json.load(open(f"{out}/sm90-gemm-shipped.json"))
TOP = 2147483647
def cfg_of(table_entries, n):  # the config a uniform batch at x = n reads (the row's detail.config)
    mine = sorted(table_entries, key=lambda e: e["n"])
    return next((e for e in mine if e["n"] >= n), mine[-1])["best"]["config"]
def same(a, b):  # configs equal, a field left out counting as 0 (the row's config omits defaults)
    return a is not None and all(a.get(k, 0) == b.get(k, 0) for k in set(a) | set(b))
d_entries = lambda t: [e for e in t["entries"] if e["routine"] == "gemm_vbatched" and e["precision"] == "d"]
def rows_of(name):
    p = f"{out}/{name}.json"
    if not os.path.exists(p):
        return None
    try:
        return json.load(open(p)).get("rows", [])
    except Exception:
        return None
def pick(rows, setup, n, variant=""):
    for r in rows or []:
        if (r.get("precision") == "d" and r.get("n") == n and r.get("variant", "") == variant
                and r.get("detail", {}).get("setup") == setup and r.get("time_ms", 0) > 0):
            return r
    return None
shipped = {s: rows_of(s) for s in ("shipped-1", "shipped-2", "shipped-3")}
def ratios(rows, setup, n, variant=""):  # shipped repeat / candidate, per repeat (None: a row missing)
    c = pick(rows, setup, n, variant)
    res = {}
    for s, sr in shipped.items():
        r = pick(sr, setup, n, variant)
        res[s] = r["time_ms"] / c["time_ms"] if (r and c) else None
    return res
def lo(rs):
    v = list(rs.values())
    return None if (not v or any(x is None for x in v)) else min(v)
shipped_cfg = {n: cfg_of(d_entries(shipped_table), n) for n in (512, 256)}
targets, md = [], []
md.append("| table | setup | x | level | ms | x cuBLAS grouped | error | status |")
md.append("|---|---|---|---|---|---|---|---|")
for name in ("shipped-1", "cand1", "shipped-2", "cand2", "shipped-3"):
    for r in rows_of(name) or []:
        sp, err = r.get("refs", {}).get("cublas-grouped", {}).get("speedup"), r.get("error")
        md.append(f"| {name} | {r.get('detail', {}).get('setup')} | {r['n']} | {r.get('variant') or '_max'} | "
                  f"{r.get('time_ms', 0):.4f} | {'' if sp is None else f'{sp:.3f}'} | "
                  f"{'' if err is None else f'{err:.2e}'} | {r.get('status')} |")
md.append("")
md.append("| candidate | x = 512 min ratio | x = 256 min ratio | 512 checked | 256 checked | skewed 512 | skewed 256 | error ok | tiles ran | met |")
md.append("|---|---|---|---|---|---|---|---|---|---|")
for name, cand in cands.items():
    rows = rows_of(name)
    table = json.load(open(f"{out}/{cand['table']}"))
    want = {n: cfg_of(d_entries(table), n) for n in (512, 256)}
    r512, r256 = ratios(rows, "gemm", 512), ratios(rows, "gemm", 256)
    extra = {"checked_512": ratios(rows, "gemm", 512, "checked"), "checked_256": ratios(rows, "gemm", 256, "checked"),
             "skewed_512": ratios(rows, "gemm_skewed", 512), "skewed_256": ratios(rows, "gemm_skewed", 256),
             "skewed_512_checked": ratios(rows, "gemm_skewed", 512, "checked")}
    ok_rows = [r for r in rows or [] if r.get("precision") == "d"]
    error_ok = bool(ok_rows) and all(r.get("status") == "ok" and r.get("error") is not None and math.isfinite(r["error"])
                                     for r in ok_rows)
    # the rows ran the candidate's tiles (the row's config: the entry of class x), the shipped rows the shipped ones
    ran = all(same((pick(rows, "gemm", n) or {}).get("detail", {}).get("config"), want[n]) for n in (512, 256))
    ran_shipped = all(same((pick(sr, "gemm", n) or {}).get("detail", {}).get("config"), shipped_cfg[n])
                      for sr in shipped.values() for n in (512, 256))
    m512, m256 = lo(r512), lo(r256)
    met = (m512 is not None and m512 >= 1.05 and m256 is not None and m256 >= 1.0 and error_ok and ran and ran_shipped)
    status = "ok" if rows else "no row"
    if rows and (m512 is None or m256 is None):
        status = "not measured"
    targets.append({
        "target": {"routine": "gemm_vbatched", "precision": "d", "n": 512, "variant": "", "metric": "ab:shipped",
                   "op": ">=", "value": 1.05,
                   "rule": "beats every shipped repeat by >= 5 % at x = 512 (shipped / candidate >= 1.05 for each "
                           "of shipped-1..3, _max level, uniform batch) and is never slower at 256 (>= 1.00 for each), "
                           "every d row of its process ok, its rows on the candidate's tiles"},
        "candidate": name, "table": cand["table"], "what": cand["what"], "entries": cand["entries"],
        "routine": "gemm_vbatched", "precision": "d", "n": 512, "variant": "", "batch": 2000,
        "measured": m512, "met": bool(met), "row_status": status,
        "ratios_512": r512, "ratios_256": r256, "min_ratio_256": m256, "error_ok": error_ok,
        "candidate_tiles_ran": ran, "shipped_tiles_ran": ran_shipped,
        "not_judged": extra,
        "shipped_spread_512": (lambda v: max(v) / min(v) - 1 if len(v) == 3 else None)(
            [pick(sr, "gemm", 512)["time_ms"] for sr in shipped.values() if pick(sr, "gemm", 512)]),
    })
    f = lambda v: "" if v is None else f"{v:.3f}"
    md.append(f"| {name} | {f(m512)} | {f(m256)} | {f(lo(extra['checked_512']))} | {f(lo(extra['checked_256']))} | "
              f"{f(lo(extra['skewed_512']))} | {f(lo(extra['skewed_256']))} | {error_ok} | {ran and ran_shipped} | {met} |")
json.dump({"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), "git_commit": commit,
           "basis": "scripts/gpu/gemm-ab.sh: each candidate table's process against the three shipped processes "
                    "of the same run (ratio = shipped time / candidate time)",
           "targets": targets}, open(f"{out}/targets.json", "w"), indent=1)
open(f"{out}/ab.md", "w").write("\n".join(md) + "\n")
print("targets: %d of %d met (%s/targets.json)" % (sum(t["met"] for t in targets), len(targets), out))
EOF

echo "---- gemm-ab summary ($((SECONDS - start)) s of $budget; $(sed -n 2p "$out/gpu.txt" | cut -d, -f1); commit $commit)"
grep -h "warm\|compiled\|refused" "$out/warmup.log" "$out/check.log" 2>/dev/null | tail -2
for spec in "${order[@]}"; do
  echo "-- ${spec%%:*}"; grep -E "^ *gemm_vbatched" "$out/${spec%%:*}.log" 2>/dev/null
done
cat "$out/ab.md" 2>/dev/null | tail -4
cat "$out/skipped.txt" 2>/dev/null
exit 0
