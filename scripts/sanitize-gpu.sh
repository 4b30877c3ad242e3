#!/usr/bin/env bash
# compute-sanitizer over every kernel family and configuration class of the tuning tables, on the GPU
# machine (issue 22). Run from the repository root with the bundle unpacked at /tmp/bundle:
#
#   scripts/sanitize-gpu.sh [BUDGET_S]        (default 420: the whole run fits an 8-minute call;
#                                              jobs start until BUDGET_S and end by BUDGET_S + 45 s)
#
# A configuration class is one set of kernel-shaping choices of a table entry (routine, layout,
# precision, staged, tensor cores, cooperative warps, through-interleaved, looking, full unroll);
# every class of libsolver/tuning/sm90.json and sm90-batch100000.json (the latter forced with
# BATCHSOLVE_TUNING_FILE, since a small batch would otherwise pick the 16384 table) runs at its
# smallest, middle and largest n (column-major groups also at issue 22's n = 8, 33, 64, 128), through the tester (potrf, potrs, posv; column_major and pointer_array for
# the column-major family) at a small batch, under each tool: racecheck (shared-memory hazards),
# memcheck, initcheck, synccheck. 0 errors and 0 hazards are expected. Jobs run JOBS at a time
# (default 8) in the order of the tools above; a job that would start after BUDGET_S is reported as
# not run. Results: $OUT/hardening/{summary.md,summary.json,logs.tar.xz}; the summary table last.
set -uo pipefail
cd "$(dirname "$0")/.."
budget_s=${1:-420}
jobs=${JOBS:-8}
batch=${SANITIZE_BATCH:-96}
out=${OUT:-/tmp/out}/hardening
bundle=${BATCHSOLVE_BUNDLE_DIR:-/tmp/bundle}
mkdir -p "$out/logs"
start=$(date +%s)
export LD_LIBRARY_PATH="$bundle/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export BATCHSOLVE_CACHE_DIR=${BATCHSOLVE_CACHE_DIR:-/tmp/batchsolve-cache}
mkdir -p "$BATCHSOLVE_CACHE_DIR"
tester=$bundle/bin/tester
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
commit=${BATCHSOLVE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
echo "sanitize-gpu: $gpu, commit $commit, $sanitizer, batch $batch, $jobs jobs, budget ${budget_s} s"

[[ -x $tester ]] || { echo "sanitize-gpu: no tester in $bundle/bin"; exit 2; }
if ! "$sanitizer" --version >"$out/logs/version.txt" 2>&1; then
  echo "sanitize-gpu: compute-sanitizer is not available here: $(tail -1 "$out/logs/version.txt")"; exit 2
fi
# A host where the sanitizer cannot attach (it refuses some H200 hosts) says so once, here.
if ! timeout 120 "$sanitizer" --tool memcheck --error-exitcode 99 "$tester" --routine potrf --precision s --n 8 \
    --batch 4 --repeat 1 --warmup 0 --backend cuda >"$out/logs/probe.txt" 2>&1; then
  echo "sanitize-gpu: compute-sanitizer does not run on this host (see the probe below); nothing measured"
  tail -5 "$out/logs/probe.txt"
  tar -C "$out" -cJf "$out/logs.tar.xz" logs && rm -rf "$out/logs"
  exit 2
fi
# The bundle's own commit (the tester prints it), which the machine's copy of the repository may not be.
bundle_commit=$(grep -oE 'tester, commit [0-9a-f]+' "$out/logs/probe.txt" | head -1 | awk '{print $3}')
[[ -n $bundle_commit ]] && commit=$bundle_commit

# The job list: one tester process per tool, table, routine, layout family and precision, with the
# smallest and largest n of each configuration class of that group.
python3 - "$out/jobs.txt" "$out/classes.json" <<'PY'
import collections, json, sys
jobs_path, classes_path = sys.argv[1], sys.argv[2]
tables = {"sm90": "libsolver/tuning/sm90.json", "sm90-batch100000": "libsolver/tuning/sm90-batch100000.json"}
tools = ["racecheck", "memcheck", "initcheck", "synccheck"]
groups, classes = collections.defaultdict(set), {}
for table, path in tables.items():
    entries = json.load(open(path))["entries"]
    members = collections.defaultdict(list)
    for e in entries:
        c = e["best"]["config"]
        key = (table, e["routine"], e["layout"], e["precision"], bool(c.get("staged")), bool(c.get("tensor_cores")),
               c.get("warps_per_matrix", 0) > 0, bool(c.get("through_interleaved")), c.get("looking", ""),
               bool(c.get("full_unroll")))
        members[key].append(e["n"])
    for key, ns in members.items():
        ns = sorted(ns)
        groups[key[:4]].update({ns[0], ns[len(ns) // 2], ns[-1]})  # smallest, middle and largest n
        classes["/".join(map(str, key))] = ns
# Issue 22's reproduction sizes (racecheck reported hazards at n = 64 and 128 of the staged
# column-major kernels) in every column-major group as well.
for group in groups:
    if group[2] == "column_major":
        groups[group].update({8, 33, 64, 128})
with open(jobs_path, "w") as f:
    for tool in tools:
        for (table, routine, layout, precision), ns in sorted(groups.items()):
            layouts = "column_major,pointer_array" if layout == "column_major" else layout
            f.write(f"{tool} {table} {routine} {layouts} {precision} {','.join(map(str, sorted(ns)))}\n")
json.dump(classes, open(classes_path, "w"), indent=1)
print(f"sanitize-gpu: {len(classes)} configuration classes, {len(groups)} groups x {len(tools)} tools")
PY

run_job() {  # TOOL TABLE ROUTINE LAYOUTS PRECISION NS
  local tool=$1 table=$2 routine=$3 layouts=$4 precision=$5 ns=$6
  local name="$tool-$table-$routine-${layouts%%,*}-$precision" log
  log=$out/logs/$name.txt
  local elapsed=$(($(date +%s) - start))
  if ((elapsed > budget_s)); then echo "$name NOTRUN" >"$out/logs/$name.status"; return; fi
  # A job may overrun the budget by at most 45 s (then it counts as a timeout): the call's limit holds.
  local limit=$((budget_s - elapsed + 45))
  ((limit > 170)) && limit=170
  local env_table=()
  [[ $table == sm90-batch100000 ]] && env_table=(env BATCHSOLVE_TUNING_FILE=libsolver/tuning/sm90-batch100000.json)
  local extra=()
  case $tool in
    memcheck) extra=(--leak-check no) ;;
    initcheck) extra=(--track-unused-memory no) ;;
  esac
  "${env_table[@]}" timeout "$limit" "$sanitizer" --tool "$tool" "${extra[@]}" --print-limit 20 --error-exitcode 99 \
    "$tester" --routine "$routine" --layout "$layouts" --precision "$precision" --n "$ns" --batch "$batch" \
    --distinct "$batch" --chunk 32 --nrhs 2 --repeat 1 --warmup 0 --check --backend cuda --jobs 2 --seed 22 \
    >"$log" 2>&1
  echo "$name $?" >"$out/logs/$name.status"
}
export -f run_job
export out start budget_s sanitizer tester batch
xargs -P "$jobs" -L 1 bash -c 'run_job "$@"' _ <"$out/jobs.txt"

# Summary: per tool and table, processes run / not run, errors or hazards, and the kernels named.
python3 - "$out" "$gpu" "$commit" "$batch" "$(( $(date +%s) - start ))" <<'PY'
import collections, glob, json, os, re, sys
out, gpu, commit, batch, seconds = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
rows = collections.OrderedDict()
kernels = collections.defaultdict(collections.Counter)
failed_checks = []
for status in sorted(glob.glob(f"{out}/logs/*.status")):
    name, code = open(status).read().split()
    tool, rest = name.split("-", 1)
    table = "sm90-batch100000" if rest.startswith("sm90-batch100000") else "sm90"
    r = rows.setdefault((tool, table), {"run": 0, "not_run": 0, "errors": 0, "hazards": 0, "warnings": 0,
                                        "timeouts": 0, "other_failures": 0})
    if code == "NOTRUN":
        r["not_run"] += 1
        continue
    r["run"] += 1
    text = open(status[:-len(".status")] + ".txt", errors="replace").read()
    if code == "124":
        r["timeouts"] += 1
    m = re.search(r"ERROR SUMMARY: (\d+) error", text)
    if m:
        r["errors"] += int(m.group(1))
    m = re.search(r"RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)", text)
    if m:
        r["hazards"] += int(m.group(1))
        r["errors"] += int(m.group(2))
        r["warnings"] += int(m.group(3))
    for k in re.findall(r"=+ .*?\b((?:potrf|potrs|posv|trsm|convert)[A-Za-z0-9_]*)", text):
        kernels[tool][k] += 1
    if code not in ("0", "99", "124") and not m:
        r["other_failures"] += 1
    if "FAILED" in text and code != "124":
        failed_checks.append(name)
lines = [f"# compute-sanitizer over the tuning tables' configuration classes",
         "", f"{gpu}; commit {commit}; batch {batch}; {seconds} s", "",
         "| tool | table | processes run | not run (budget) | timeouts | errors | hazards (warnings) |",
         "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
for (tool, table), r in rows.items():
    lines.append(f"| {tool} | {table} | {r['run']} | {r['not_run']} | {r['timeouts']} | {r['errors']} | "
                 f"{r['hazards']} ({r['warnings']}) |")
lines.append("")
for tool, counter in kernels.items():
    lines.append(f"{tool} reports name: " + ", ".join(f"{k} ({n})" for k, n in counter.most_common(12)))
if failed_checks:
    lines.append("tester rows FAILED (wrong results) in: " + ", ".join(failed_checks))
text = "\n".join(lines) + "\n"
open(f"{out}/summary.md", "w").write(text)
json.dump({"gpu": gpu, "commit": commit, "batch": int(batch), "seconds": seconds,
           "rows": [dict(tool=t, table=b, **r) for (t, b), r in rows.items()],
           "kernels": {t: dict(c) for t, c in kernels.items()}, "tester_failed": failed_checks},
          open(f"{out}/summary.json", "w"), indent=1)
print(text)
PY
tar -C "$out" -cJf "$out/logs.tar.xz" logs jobs.txt classes.json && rm -rf "$out/logs"
