#!/usr/bin/env bash
# Every GPU test of the library and the apps in one device call (budget SUITES_BUDGET_S, else
# TOPIC_BUDGET_S, else 400 s). NVRTC is most of the work (each generated Cholesky kernel 0.1-60 s on
# one core), so the call compiles each kernel once, on every core, before the suites that need them:
#
#   1. at once, side by side (bounded by PHASE1_S, default 45 s, except the family suites):
#      - the record pass: the Cholesky-kernel suites (labels unit, gpu) with every kernel refused and
#        listed instead of compiled (BATCHSOLVE_KERNEL_RECORD_ONLY; their precompile steps list every
#        kernel of a test before its first call); seconds, little CPU;
#      - the apps' GPU tests (ALS, DVC: gtest filter Gpu*:Cuda*; seconds);
#      - the family suites (labels ldlt, families: LDLT, large Cholesky, triangular, vbatched BLAS-3,
#        multi-device, refinement), which compile their own GEMM/TRSM/POTF2 kernels in their shards
#        and go on beside the phases below until the budget;
#   2. the warm-up: the recorded kernels into the disk cache on every thread, the slowest first (a
#      longest-first order keeps one 40 s kernel from ending the warm-up alone), in WARM_PROCESSES
#      (default 4) processes, bounded by WARM_S (default: 55% of what is left; call 1 of 2026-12-02: 146 s warm-up, 83 s of shards); its time is printed on
#      its own line;
#   3. the Cholesky-kernel suites' shards, which now load their kernels from the disk cache.
#
# BEM's GPU tests live in test_bem_acoustics, which links Gmsh and is not in the bundle: listed as
# "run by scripts/gpu/bem.sh". Run from the repository root, bundle at /tmp/bundle (RUN), or on a
# build machine as a dry run: BUILD_DIR=build scripts/gpu/suites.sh (every GPU test skips).
# Results: $OUT/suites/{summary.txt, summary.tsv, kernels-recorded.txt, record/, families/,
# cholesky/, apps/}; the table last (passed / failed / skipped / timed out / not run per binary).
# Exit 0 only with 0 failed, 0 timed out, 0 not run.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}/suites
budget=${SUITES_BUDGET_S:-${TOPIC_BUDGET_S:-400}}
phase1=${PHASE1_S:-45}
rm -rf "$out"; mkdir -p "$out/apps"
start=$SECONDS
left() { echo $((budget - (SECONDS - start))); }
export BATCHSOLVE_CACHE_DIR=${BATCHSOLVE_CACHE_DIR:-/tmp/batchsolve-cache}; mkdir -p "$BATCHSOLVE_CACHE_DIR"
commit=${BATCHSOLVE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
# One seed for the whole call: the record pass and the shards draw the same samples (the typed
# EverySizeEveryLayout tests and the column-major DefaultsAtSampledSizes* tests sample their cases by
# seed), so the warm-up compiles the kernels the shards will ask for; a fresh one per call unless set.
export BATCHSOLVE_TEST_SEED=${BATCHSOLVE_TEST_SEED:-$(( (RANDOM << 30) | (RANDOM << 15) | RANDOM ))}
echo "suites: BATCHSOLVE_TEST_SEED=$BATCHSOLVE_TEST_SEED (replays this call's samples)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1 > "$out/gpu.txt"
[[ -s $out/gpu.txt ]] || echo "no GPU (dry run)" > "$out/gpu.txt"
if [[ -n ${BUILD_DIR:-} ]]; then  # dry run: the build tree's executables stand in for the bundle's
  run=$out/run-from-build
  printf '#!/usr/bin/env bash\nname=$1; shift\nexe=$(find "%s" -type f -name "$name" -perm -u+x | head -1)\n[[ -n $exe ]] || exit 127\nexec "$exe" "$@"\n' \
    "$(cd "$BUILD_DIR" && pwd)" > "$run"
  chmod +x "$run"
else
  run=${RUN:-/tmp/bundle/run}
fi
printf 'suite\tpassed\tfailed\tskipped\ttimed_out\tnot_run\tnote\n' > "$out/summary.tsv"
runall() {  # OUT-subfolder, then run-all.sh's environment settings as NAME=VALUE words
  local sub=$1; shift
  env OUT="$out/$sub" RUN="$run" "$@" libsolver/tests/gpu/run-all.sh > "$out/$sub.log" 2>&1
}

# ---- phase 1: record, apps, family suites side by side ---------------------------------------------
runall record LABELS=unit,gpu RECORD_ONLY=1 BUDGET_SECONDS=$((phase1 - 5)) SHARD_SECONDS=$((phase1 - 10)) \
  MIN_SHARD_SECONDS=5 JOBS=8 &
record_pid=$!
runall families LABELS=ldlt,families KERNEL_MANIFEST=/dev/null BUDGET_SECONDS=$(( $(left) - 10 )) \
  SHARD_SECONDS=${SHARD_SECONDS:-150} JOBS=3 &
families_pid=$!

app_suite() {  # executable, gtest filter, seconds
  local exe=$1 filter=$2 secs=$3 log=$out/apps/$1.log
  if ! "$run" "$exe" --gtest_list_tests --gtest_filter="$filter" > "$log.list" 2>&1; then
    printf '%s\t0\t0\t0\t0\t1\tnot in the bundle\n' "$exe ($filter)" > "$log.row"; return
  fi
  local tests; tests=$(grep -c '^  ' "$log.list")
  timeout -k 5 "$secs" "$run" "$exe" --gtest_filter="$filter" > "$log" 2>&1
  local rc=$? pass fail skip to=0 nr=0
  pass=$(grep -cE '^\[       OK \] ' "$log"); fail=$(grep -cE '^\[  FAILED  \] .* \([0-9]+ ms\)$' "$log")
  skip=$(grep -cE '^\[  SKIPPED \] .* \([0-9]+ ms\)$' "$log")
  ((rc == 124 || rc == 137)) && to=1
  nr=$((tests - pass - fail - skip)); ((nr < 0)) && nr=0
  ((to == 1)) && nr=$((nr > 0 ? nr - 1 : 0))  # the test that was running counts as timed out
  printf '%s\t%d\t%d\t%d\t%d\t%d\trc %d\n' "$exe ($filter)" "$pass" "$fail" "$skip" "$to" "$nr" "$rc" > "$log.row"
}
# NVRTC's speed on one core of this machine: the five slowest kernel classes of
# results/2026-12-02-cpu-141ae0b-kernel-compile-times, one process each (they are not the suites'
# kernels: a scratch cache), beside the record pass, which uses little CPU
nvrtc_sample() {
  local i=0 line scratch
  while IFS= read -r line; do
    i=$((i + 1)); scratch=$(mktemp -d); printf '%s\n' "$line" > "$scratch/k.txt"
    printf '%d\t%s\n' "$i" "$(timeout 60 "$run" batchsolve-warmup --arch 90 --threads 1 --cache-dir "$scratch/c" \
      --kernels "$scratch/k.txt" 2>&1 | grep -oE '[0-9.]+ s with' | cut -d' ' -f1)"
    rm -rf "$scratch"
  done < libsolver/tests/gpu/nvrtc-sample.txt > "$out/nvrtc-sample.tsv"
}
nvrtc_sample &
app_suite test_als 'Gpu*:Cuda*' 40 &
app_suite test_dic_volume 'Gpu*:Cuda*' 40 &
app_suite test_dvc_stages 'Gpu*:Cuda*' 40 &
wait "$record_pid"
manifest=$out/kernels-recorded.txt
sort -u "$out/record/run-all/suite-kernels.txt" 2>/dev/null | grep . > "$manifest" || : > "$manifest"
record_s=$((SECONDS - start))
echo "suites: record pass: $(grep -c . "$manifest") kernels in $record_s s"

# ---- phases 2 and 3: the warm-up (longest first), then the Cholesky-kernel suites --------------------
# Expected NVRTC cost of a manifest line, for the order only (sm_90 compile times measured on one
# core, results/2026-12-02-cpu-*-kernel-compile-times): the fully unrolled column-major defaults
# (nb 0) of n > 16 take 5-35 s, the rest 0.04-10 s growing with n; complex types are taken as twice
# their real ones (an assumption: more arithmetic per entry, not measured side by side).
# The kernels the record pass cannot list (plain calls of tests without a compile-ahead step stop at
# their first refused kernel), as the last call's shards compiled them: warmed too, so that the
# shards compile nothing themselves (call 1 of 2026-12-02: 286 such kernels, ThroughInterleaved and
# the nonfinite suite compiled theirs one after another in their shards)
unrecorded=libsolver/tests/gpu/suite-kernels-unrecorded.txt.xz
warm_list=$out/kernels-warm-list.txt
{ cat "$manifest"; [[ -s $unrecorded ]] && xz -dc "$unrecorded"; } | grep . | sort -u > "$warm_list"
echo "suites: warm list: $(grep -c . "$manifest") recorded + $(( $(grep -c . "$warm_list") - $(grep -c . "$manifest") )) from $unrecorded"
ordered=$out/kernels-warm-order.txt
awk '{
  lay = $1; routine = $2; p = $3; n = $5 + 0; nb = 1
  if (match($0, /"nb":[0-9]+/)) nb = substr($0, RSTART + 5, RLENGTH - 5) + 0
  cost = n <= 16 ? 0.5 : n <= 33 ? 2 : 4
  if (lay == "column_major" && nb == 0 && n > 16) cost *= 6
  if (p == "c" || p == "z") cost *= 2
  if (routine == "posv") cost *= 1.5
  printf "%09.2f\t%s\n", cost, $0
}' "$warm_list" | sort -r | cut -f2- > "$ordered"
lib_budget=$(( $(left) - 5 ))
warm=${WARM_S:-$(( lib_budget * 55 / 100 ))}
echo "suites: warming $(grep -c . "$ordered") kernels for at most $warm s, then the shards ($lib_budget s in all)"
runall cholesky LABELS=unit,gpu KERNEL_MANIFEST="$ordered" BUDGET_SECONDS=$lib_budget WARM_SECONDS=$warm \
  WARM_PROCESSES=${WARM_PROCESSES:-4} \
  SHARD_SECONDS=${SHARD_SECONDS:-150} JOBS=${JOBS:-6}
wait  # the family suites and the apps' tests

# ---- the table -------------------------------------------------------------------------------------
cat "$out"/apps/*.row >> "$out/summary.tsv" 2>/dev/null
printf '%s\t-\t-\t-\t-\t-\t%s\n' "test_bem_acoustics (Gpu*)" "run by scripts/gpu/bem.sh (links Gmsh: not in the bundle)" >> "$out/summary.tsv"
for sub in families cholesky; do
  python3 - "$out/$sub/run-all/summary.txt" "$sub" >> "$out/summary.tsv" <<'PY2'
import re, sys
try:
    lines = open(sys.argv[1]).read().splitlines()
except OSError:
    lines = []
    print(f"library GPU suites ({sys.argv[2]})\t0\t0\t0\t0\t1\trun-all.sh wrote no summary")
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
done
{
  echo "GPU suites, commit $commit, $(cat "$out/gpu.txt"), $((SECONDS - start)) s (budget $budget s)"
  echo "record pass: $(grep -c . "$manifest") kernels listed in $record_s s (beside the apps' tests and the family suites); BATCHSOLVE_TEST_SEED=$BATCHSOLVE_TEST_SEED"
  echo "NVRTC, one core, the five sample kernels (s): $(cut -f2 "$out/nvrtc-sample.tsv" 2>/dev/null | paste -sd' ' -)"
  grep -m1 '^warm-up' "$out/cholesky/run-all/summary.txt" 2>/dev/null | sed 's/^/kernel cache /'
  # the table (the GPU image has no column(1))
  awk -F'\t' '{ printf "%-36s %7s %7s %8s %10s %8s  %s\n", $1, $2, $3, $4, $5, $6, $7 }' "$out/summary.tsv"
  awk -F'\t' 'NR > 1 && $2 != "-" { p += $2; f += $3; s += $4; t += $5; n += $6 }
    END { printf "total: %d passed, %d failed, %d skipped, %d timed out, %d not run\n", p, f, s, t, n }' "$out/summary.tsv"
  # the failing tests by name, and the seeds that replay them
  grep -hE '^\[  FAILED  \] .* \([0-9]+ ms\)$|^\[ seed     \]' "$out"/apps/*.log 2>/dev/null | head -10
  for sub in families cholesky; do grep -E '^\[  FAILED  \]' "$out/$sub/run-all/summary.txt" 2>/dev/null | head -10; done
  for sub in families cholesky; do
    tar -xzOf "$out/$sub/run-all/logs.tar.gz" 2>/dev/null | grep -E '^\[ seed     \]' | head -10
  done
} > "$out/summary.txt"
# targets.json: the issue's targets for the suites, from this run's table
awk -F'\t' -v secs=$((SECONDS - start)) 'NR > 1 && $2 != "-" { f += $3; t += $5; n += $6; p += $2 }
  END {
    printf "[\n {\"target\": \"GPU suites: 0 failed\", \"measured\": %d, \"met\": %s},\n", f, f == 0 ? "true" : "false"
    printf " {\"target\": \"GPU suites: 0 timed out\", \"measured\": %d, \"met\": %s},\n", t, t == 0 ? "true" : "false"
    printf " {\"target\": \"GPU suites: 0 not run\", \"measured\": %d, \"met\": %s},\n", n, n == 0 ? "true" : "false"
    printf " {\"target\": \"every GPU test in one run of <= 540 s (9 minutes)\", \"measured\": %d, \"passed\": %d, \"met\": %s}\n]\n", secs, p, (secs <= 540 && f + t + n == 0) ? "true" : "false"
  }' "$out/summary.tsv" > "$out/targets.json"
rm -f "$out/run-from-build"
cat "$out/summary.txt"
awk -F'\t' 'NR > 1 && $2 != "-" { bad += $3 + $5 + $6 } END { exit bad > 0 }' "$out/summary.tsv"
