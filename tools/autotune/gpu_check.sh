#!/usr/bin/env bash
# GPU check of the tuner moved to tools/autotune/ and of the compact tuning tables (issue 21), for the
# GPU machine: repository root as working directory, the bundle at /tmp/bundle (or $BUNDLE), files to
# $OUT/arch-shelf/, a summary last. About 2-3 minutes on an H100/H200 host with 16 cores.
#  1. The tuner end to end, which no CPU test reaches (compile pool, inputs, timing, table, --resume):
#     s potrf/potrs/posv, every layout family, n = 5 and 36 (an anchor above 32: the cooperative-only
#     and split rules), batch 2048; then the same command again, which must take every case from its
#     --resume file and write the same table; then --candidates-from that table at n = 6.
#  2. The compact tables pick the same kernels as the full ones: the tester with the compiled-in
#     (compact) tables and with BATCHSOLVE_TUNING_FILE = the full tables (shelve_table.py expand),
#     same binary and seed; every row's kernel name must be the same.
set -uo pipefail
cd "$(dirname "$0")/../.."
bundle=${BUNDLE:-/tmp/bundle}
out=${OUT:-/tmp/out}/arch-shelf
mkdir -p "$out"
export BATCHSOLVE_CACHE_DIR=${BATCHSOLVE_CACHE_DIR:-/tmp/batchsolve-cache-arch-shelf}
mkdir -p "$BATCHSOLVE_CACHE_DIR"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader > "$out/gpu.txt" 2>&1
jobs=$(nproc)
t0=$(date +%s)

# ---- 1. the tuner ------------------------------------------------------------------------------------
tune=(autotune --routine potrf,posv,potrs --precision s --n 5,36 --batch 2048
      --layout interleaved,chunked,column_major --repeat 2 --jobs "$jobs" --seed 7 --commit "${BATCHSOLVE_COMMIT:-check}"
      --output "$out/table.json" --log "$out/candidates.jsonl" --resume "$out/progress.jsonl")
"$bundle/run" "${tune[@]}" > "$out/autotune-1.log" 2>&1; rc1=$?
cp "$out/table.json" "$out/table-1.json" 2>/dev/null
"$bundle/run" "${tune[@]}" > "$out/autotune-2.log" 2>&1; rc2=$?
"$bundle/run" autotune --routine potrf --precision s --n 6 --batch 2048 --layout interleaved,column_major --repeat 2 \
  --jobs "$jobs" --candidates-from "$out/table.json" --output "$out/table-known.json" > "$out/autotune-3.log" 2>&1; rc3=$?
t1=$(date +%s)
tuner=$(python3 - "$out" <<'EOF'
import json, sys
out = sys.argv[1]
try:
    a = json.load(open(f"{out}/table-1.json")); b = json.load(open(f"{out}/table.json"))
    k = json.load(open(f"{out}/table-known.json"))
except Exception as e:
    print(f"FAILED (a table is missing: {e})"); sys.exit()
strip = lambda t: [(e["routine"], e["precision"], e["layout"], e["n"], e["best"]["config"]) for e in t["entries"]]
resumed = open(f"{out}/autotune-2.log").read()
ok = len(a["entries"]) == 18 and strip(a) == strip(b) and "resume: 18 finished cases" in resumed and len(k["entries"]) == 2
print(("ok" if ok else "FAILED") + f": {len(a['entries'])} of 18 cases tuned; resumed run: "
      f"{'same table' if strip(a) == strip(b) else 'ANOTHER table'}, "
      f"{'all 18 taken from --resume' if 'resume: 18 finished cases' in resumed else 'NOT all taken from --resume'}; "
      f"--candidates-from: {len(k['entries'])} of 2 cases")
EOF
)

# ---- 2. compact tables against the full ones -------------------------------------------------------
full=()
for t in sm90 sm90-batch100000; do
  python3 tools/autotune/shelve_table.py expand "libsolver/tuning/$t.json" --output "$out/$t.full.json" > /dev/null && full+=("$out/$t.full.json")
done
rows=(--backend cuda --routine potrf,potrs,posv --precision s,d --layout interleaved,chunked,column_major --repeat 2 --seed 42
      --distinct 256)
"$bundle/run" tester "${rows[@]}" --n 8,32,128 --batch 16384 --json "$out/compact-16384.json" > "$out/compact-16384.log" 2>&1
"$bundle/run" tester "${rows[@]}" --n 32 --batch 100000 --json "$out/compact-100000.json" > "$out/compact-100000.log" 2>&1
list=$(IFS=:; echo "${full[*]}")
BATCHSOLVE_TUNING_FILE=$list "$bundle/run" tester "${rows[@]}" --n 8,32,128 --batch 16384 --json "$out/full-16384.json" > "$out/full-16384.log" 2>&1
BATCHSOLVE_TUNING_FILE=$list "$bundle/run" tester "${rows[@]}" --n 32 --batch 100000 --json "$out/full-100000.json" > "$out/full-100000.log" 2>&1
t2=$(date +%s)
tables=$(python3 - "$out" <<'EOF'
import json, sys
out = sys.argv[1]
same = differ = 0; notes = []
for b in ("16384", "100000"):
    try:
        c = json.load(open(f"{out}/compact-{b}.json"))["rows"]; f = json.load(open(f"{out}/full-{b}.json"))["rows"]
    except Exception as e:
        print(f"FAILED (tester output missing: {e})"); sys.exit()
    key = lambda r: (r["routine"], r["precision"], r["layout"], r["n"], r["batch"])
    fk = {key(r): r for r in f}
    for r in c:
        g = fk.get(key(r))
        kc, kf = r.get("kernel", {}).get("name"), (g or {}).get("kernel", {}).get("name")
        if g is not None and kc == kf and r["status"] == "ok" and g["status"] == "ok":
            same += 1
        else:
            differ += 1; notes.append(f"{key(r)}: {kc} vs {kf}")
print(("ok" if differ == 0 and same > 0 else "FAILED") + f": {same} rows with the same kernel and status ok, {differ} otherwise"
      + ("".join("\n    " + n for n in notes[:10])))
EOF
)
rm -f "$out"/*.full.json
xz -T0 -f "$out/candidates.jsonl" 2>/dev/null
echo "=== arch-shelf GPU check ($(cat "$out/gpu.txt"); commit ${BATCHSOLVE_COMMIT:-?})"
echo "tuner (exit codes $rc1 $rc2 $rc3, $((t1 - t0)) s): $tuner"
grep -h "^autotune: [0-9]* entries" "$out/autotune-1.log" | head -n 1
echo "compact vs full tables in the tester ($((t2 - t1)) s): $tables"
[[ $rc1 == 0 && $rc2 == 0 && $rc3 == 0 && $tuner == ok* && $tables == ok* ]]
