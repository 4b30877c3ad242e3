#!/usr/bin/env bash
# Every GPU test of the library and the apps in one device call (budget SUITES_BUDGET_S, default
# 330 s): the apps' GPU tests first (ALS, DVC: gtest filter Gpu*; seconds), then the library's GPU
# suites through libsolver/tests/gpu/run-all.sh. The warm-up compiles exactly the kernels this
# commit's suites ask for: a record-only pass (kernels listed and refused, seconds) writes the
# manifest, then batchsolve-warmup compiles it on every core, then the shards run.
# BEM's GPU tests live in test_bem_acoustics, which links Gmsh and is not in the bundle: they are
# listed as "run by scripts/gpu/bem.sh" (that script runs bem's GPU pipeline).
# Run from the repository root, bundle at /tmp/bundle. Results: $OUT/suites/{summary.txt,
# summary.tsv, run-all/, apps/}; the table last. Exit 0 only with 0 failed, 0 timed out, 0 not run.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}/suites
budget=${SUITES_BUDGET_S:-330}
run=${RUN:-/tmp/bundle/run}
rm -rf "$out"; mkdir -p "$out/apps"
start=$SECONDS
left() { echo $((budget - (SECONDS - start))); }
export BATCHSOLVE_CACHE_DIR=${BATCHSOLVE_CACHE_DIR:-/tmp/batchsolve-cache}; mkdir -p "$BATCHSOLVE_CACHE_DIR"
commit=${BATCHSOLVE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1 > "$out/gpu.txt"
printf 'suite\tpassed\tfailed\tskipped\ttimed_out\tnot_run\tnote\n' > "$out/summary.tsv"

# ---- the apps' GPU tests (each bounded; a suite absent from the bundle is reported, not passed) ----
app_suite() {  # executable, gtest filter, seconds
  local exe=$1 filter=$2 secs=$3 log=$out/apps/$1.log
  if ! "$run" "$exe" --gtest_list_tests --gtest_filter="$filter" > "$log.list" 2>&1; then
    printf '%s\t0\t0\t0\t0\t1\tnot in the bundle\n' "$exe ($filter)" >> "$out/summary.tsv"; return
  fi
  local tests; tests=$(grep -c '^  ' "$log.list")
  timeout -k 5 "$secs" "$run" "$exe" --gtest_filter="$filter" > "$log" 2>&1
  local rc=$? pass fail skip to=0 nr=0
  pass=$(grep -cE '^\[       OK \] ' "$log"); fail=$(grep -cE '^\[  FAILED  \] .* \([0-9]+ ms\)$' "$log")
  skip=$(grep -cE '^\[  SKIPPED \] .* \([0-9]+ ms\)$' "$log")
  ((rc == 124 || rc == 137)) && to=1
  nr=$((tests - pass - fail - skip)); ((nr < 0)) && nr=0
  ((to == 1)) && nr=$((nr > 0 ? nr - 1 : 0))  # the test that was running counts as timed out
  printf '%s\t%d\t%d\t%d\t%d\t%d\trc %d\n' "$exe ($filter)" "$pass" "$fail" "$skip" "$to" "$nr" "$rc" >> "$out/summary.tsv"
}
app_suite test_als 'Gpu*:Cuda*' 40
app_suite test_dic_volume 'Gpu*:Cuda*' 40
app_suite test_dvc_stages 'Gpu*:Cuda*' 40
printf '%s\t-\t-\t-\t-\t-\t%s\n' "test_bem_acoustics (Gpu*)" "run by scripts/gpu/bem.sh (links Gmsh: not in the bundle)" >> "$out/summary.tsv"

# ---- the library's GPU suites: record this commit's kernels, warm them, run the shards -------------
OUT=$out RECORD_ONLY=1 BUDGET_SECONDS=40 SHARD_SECONDS=30 JOBS=8 RUN=$run \
  timeout -k 5 50 libsolver/tests/gpu/run-all.sh > "$out/record.log" 2>&1
manifest=$out/kernels-recorded.txt
cp "$out/run-all/suite-kernels.txt" "$manifest" 2>/dev/null || : > "$manifest"
rm -rf "$out/run-all"
echo "suites: $(grep -c . "$manifest") kernels recorded in $((SECONDS - start)) s"
lib_budget=$(( $(left) - 5 ))
warm=$(( lib_budget * 2 / 5 ))
# Warm this commit's recorded kernels first, then the committed manifest's (the typed suites' record
# stops at their first kernel; the committed list has the rest): the warm-up's time limit cuts the end.
warm_list=$out/kernels-warm.txt
{ cat "$manifest"; xz -dc libsolver/tests/gpu/suite-kernels.txt.xz 2>/dev/null; } | awk 'NF && !seen[$0]++' > "$warm_list"
manifest=$warm_list
echo "suites: warming $(grep -c . "$manifest") kernels for at most $warm s"
OUT=$out KERNEL_MANIFEST=$manifest BUDGET_SECONDS=$lib_budget WARM_SECONDS=$warm SHARD_SECONDS=${SHARD_SECONDS:-150} \
  JOBS=${JOBS:-6} RUN=$run libsolver/tests/gpu/run-all.sh > "$out/run-all.log" 2>&1
# run-all's per-suite lines into the table
python3 - "$out/run-all/summary.txt" >> "$out/summary.tsv" <<'PY2'
import re, sys
try:
    lines = open(sys.argv[1]).read().splitlines()
except OSError:
    lines = []
    print("library GPU suites\t0\t0\t0\t0\t1\trun-all.sh wrote no summary")
for line in lines:
    m = re.match(r"\[[a-z]+\] +(\S+) +(.*)", line)
    if not m:
        continue
    suite, rest = m.groups()
    if "not in the bundle" in rest or "no GPU tests" in rest:
        print(f"{suite}\t0\t0\t0\t0\t1\t{rest.strip()}")
        continue
    c = re.search(r"(\S+) +(\d+) passed, +(\d+) failed, +(\d+) skipped; shards of (\d+): (\d+) timed out \(\d+ s\), (\d+) not run, (\d+) crashed", rest)
    if c:
        st, p, f, s, n, t, nr, cr = c.groups()
        print(f"{suite}\t{p}\t{f}\t{s}\t{t}\t{nr}\t{st}: {n} shards, {cr} crashed")
PY2
{
  echo "GPU suites, commit $commit, $(cat "$out/gpu.txt"), $((SECONDS - start)) s (budget $budget s)"
  grep -m1 '^warm-up' "$out/run-all/summary.txt" 2>/dev/null
  # the table (the GPU image has no column(1))
  awk -F'\t' '{ printf "%-36s %7s %7s %8s %10s %8s  %s\n", $1, $2, $3, $4, $5, $6, $7 }' "$out/summary.tsv"
  awk -F'\t' 'NR > 1 && $2 != "-" { p += $2; f += $3; s += $4; t += $5; n += $6 }
    END { printf "total: %d passed, %d failed, %d skipped, %d timed out, %d not run\n", p, f, s, t, n }' "$out/summary.tsv"
  grep -hE '^\[  FAILED  \] .* \([0-9]+ ms\)$' "$out"/apps/*.log 2>/dev/null | head -10
  grep -E '^\[  FAILED  \]' "$out/run-all/summary.txt" 2>/dev/null | head -10
} > "$out/summary.txt"
cat "$out/summary.txt"
awk -F'\t' 'NR > 1 && $2 != "-" { bad += $3 + $5 + $6 } END { exit bad > 0 }' "$out/summary.tsv"
