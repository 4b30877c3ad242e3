#!/usr/bin/env bash
# The GPU test suites in one device call: the disk kernel cache is warmed first (batchsolve-warmup on
# every CPU thread, for exactly the kernels the suites compiled in an earlier run: a kernel manifest),
# then each suite's GPU tests run in gtest shards, several shards at a time, each bounded in time,
# and one summary line per suite is printed (the last lines: the summary of the whole run).
#
# Why: cold, the suites spend most of their time in NVRTC (thousands of kernels, 0.1-10 s each), and
# their processes compiled the same kernels side by side; the 2026-11-27 runs timed out that way.
# Warmed, a shard only loads CUBINs from disk and runs.
#
# On the GPU machine (repository root, bundle at /tmp/bundle):
#   libsolver/tests/gpu/run-all.sh
# Dry run on a build machine without a GPU (the suites skip; checks the script, not the GPU):
#   BUILD_DIR=build-gpu libsolver/tests/gpu/run-all.sh
#
# Environment (all optional):
#   OUT               results go to $OUT/run-all/ (default /tmp/out): summary.txt, suite-kernels.txt (the
#                     manifest this run recorded: commit it as libsolver/tests/gpu/suite-kernels.txt so the
#                     next run warms exactly those kernels), logs.tar.gz (every shard's log)
#   RUN               how to run a bundle program (default /tmp/bundle/run NAME ARGS...)
#   BUILD_DIR         instead of RUN: run the executables of this build tree (dry run)
#   KERNEL_MANIFEST   manifest to warm from, plain or .xz/.gz (default libsolver/tests/gpu/suite-kernels.txt.xz
#                     or .txt when present; without one the warm-up is skipped and this run records one)
#   BATCHSOLVE_CACHE_DIR  the disk kernel cache (default /tmp/batchsolve-cache)
#   WARM_SECONDS      time limit of the warm-up (default 240)
#   WARM_PROCESSES    warm-up processes, each with its share of the threads and of the list (default 1)
#   SHARD_SECONDS     time limit of one shard (default 150)
#   BUDGET_SECONDS    the whole run's limit (default 540, inside a device call's 600 s): a shard that
#                     would start after it is reported as not run
#   MIN_SHARD_SECONDS a shard is not started with less of the budget left (default 15)
#   JOBS              shards at a time (default 4: each shard's CPU reference checks use the cores too)
#   LABELS            comma-separated labels to run (default all): gpu, unit, ldlt, families
#   SHARDS_PER_SUITE  gtest shards of the heavy suites (default 4)
#   RECORD_ONLY=1     list the kernels only: no warm-up, and every kernel the shards ask for is recorded
#                     and refused instead of compiled (BATCHSOLVE_KERNEL_RECORD_ONLY), so the tests fail
#                     fast; the result is suite-kernels.txt (the kernels each test compiles ahead of its
#                     run; a typed suite's plain calls stop at the first kernel). Seconds, not minutes.
set -uo pipefail
cd "$(dirname "$0")/../../.."  # the repository root
start=$(date +%s)
out="${OUT:-/tmp/out}/run-all"
rm -rf "$out" && mkdir -p "$out/logs" "$out/manifests"
export BATCHSOLVE_CACHE_DIR=${BATCHSOLVE_CACHE_DIR:-/tmp/batchsolve-cache}
mkdir -p "$BATCHSOLVE_CACHE_DIR"
warm_seconds=${WARM_SECONDS:-240}
shard_seconds=${SHARD_SECONDS:-150}
budget=${BUDGET_SECONDS:-540}
jobs=${JOBS:-4}
per_suite=${SHARDS_PER_SUITE:-4}
labels=",${LABELS:-gpu,unit,ldlt,families},"

# run NAME ARGS...: a bundle program (or, with BUILD_DIR, the build tree's executable of that name)
if [[ -n ${BUILD_DIR:-} ]]; then
  runner="$out/run-from-build"
  cat > "$runner" <<EOF
#!/usr/bin/env bash
name=\$1; shift
exe=\$(find "$(cd "$BUILD_DIR" && pwd)" -type f -name "\$name" -perm -u+x | head -1)
[[ -n \$exe ]] || { echo "run-from-build: no executable \$name under $BUILD_DIR" >&2; exit 127; }
exec "\$exe" "\$@"
EOF
  chmod +x "$runner"
else
  runner=${RUN:-/tmp/bundle/run}
fi
export OMP_WAIT_POLICY=passive  # the suites' CPU references share the cores with other shards

# ---- the shards: label, suite, gtest shards, and which tests (the CUDA instances only) --------------
# The typed suites' CPU instances (TypeParam cpu_*, mixed_cpu_*) are left out: CI runs them, and here
# they would only take cores. Heavy suites (every n of every family) are split into gtest shards.
# The suites that finish in seconds first, the heavy ones (potrf's every size and layout, the GPU
# suites) last: on the H200 at a6216bc the heavy
# shards started first held every slot for their 150 s and 16 quick shards were never started.
suites=(
  "unit batchsolve_potrs_test 2"
  "unit batchsolve_posv_test 2"
  "unit batchsolve_layout_test 1"
  "unit batchsolve_nonfinite_test 2"
  "unit batchsolve_cuda_backend_smoke_test 1"
  "unit batchsolve_workspace_test 1"
  "ldlt batchsolve_ldlt_test 1"
  "families batchsolve_large_test 2"
  "families batchsolve_triangular_test 1"
  "families batchsolve_vbatched_blas_test 1"
  "families batchsolve_multi_device_test 1"
  "families batchsolve_refinement_test 1"
  "unit batchsolve_potrf_test 2"
  "gpu batchsolve_jit_gpu_test $per_suite"
  "gpu batchsolve_column_major_gpu_test $per_suite"
  "gpu batchsolve_coop_gpu_test 2"
)
# gtest filter of a suite's GPU tests (from its listing): every test of a non-typed suite, the CUDA
# instances of typed ones (TypeParam cuda_*, or Config<Backend 1, ...>), no value-parameterised test
# of the CPU backend (".../cpu")
gpu_filter() {
  awk '/^[^ ]/ { s = $1; cpu = /TypeParam = (mixed_)?cpu_|TypeParam = .*Config<\(batchsolve::Backend\)0,/ }
       /^  / && !cpu && $1 !~ /\/cpu$/ { print s $1 }' | paste -sd: -
}

: > "$out/shards.list"
for entry in "${suites[@]}"; do
  read -r label suite count <<<"$entry"
  [[ $labels == *",$label,"* ]] || continue
  if ! listing=$("$runner" "$suite" --gtest_list_tests 2>/dev/null); then
    echo "$label $suite absent" >> "$out/absent.list"
    continue
  fi
  filter=$(gpu_filter <<<"$listing")
  [[ -n $filter ]] || { echo "$label $suite no-gpu-tests" >> "$out/absent.list"; continue; }
  printf '%s\n' "$filter" > "$out/filter.$suite"
  for ((i = 0; i < count; i++)); do echo "$label $suite $i $count" >> "$out/shards.list"; done
done
shards=$(wc -l < "$out/shards.list")
# A record-only run lists the heavy suites' kernels first: they are most of the kernels, and the
# listing's time limit then cuts the quick suites' (their few kernels compile in their own shards).
[[ ${RECORD_ONLY:-0} == 1 ]] && tac "$out/shards.list" > "$out/shards.reversed" && mv "$out/shards.reversed" "$out/shards.list"

# ---- warm-up: exactly the kernels a previous run recorded --------------------------------------------
manifest=${KERNEL_MANIFEST:-}
if [[ -z $manifest ]]; then  # the committed one, compressed or not
  for m in libsolver/tests/gpu/suite-kernels.txt.xz libsolver/tests/gpu/suite-kernels.txt; do
    [[ -s $m ]] && { manifest=$m; break; }
  done
  manifest=${manifest:-libsolver/tests/gpu/suite-kernels.txt}
fi
case $manifest in  # batchsolve-warmup reads plain text
  *.xz) xz -dc "$manifest" > "$out/warm-manifest.txt" && manifest=$out/warm-manifest.txt ;;
  *.gz) gzip -dc "$manifest" > "$out/warm-manifest.txt" && manifest=$out/warm-manifest.txt ;;
esac
record_only=${RECORD_ONLY:-0}
if [[ $record_only == 1 ]]; then
  export BATCHSOLVE_KERNEL_RECORD_ONLY=1
  warm="warm-up: none (RECORD_ONLY=1: the shards list their kernels; their failures are expected)"
elif [[ -s $manifest ]]; then
  threads=$(nproc)
  warm_start=$(date +%s)
  # CUBINs in the disk cache before and after: a warm-up cut by its time limit prints no summary line
  cached_before=$(find "$BATCHSOLVE_CACHE_DIR" -maxdepth 1 -name '*.cubin' 2>/dev/null | wc -l)
  # NVRTC's rate on this machine: the CUBINs written so far, every 5 s (seconds, count), so that a
  # warm-up cut by its limit still says how far it got and how fast
  ( while sleep 5; do
      echo "$(( $(date +%s) - warm_start )) $(( $(find "$BATCHSOLVE_CACHE_DIR" -maxdepth 1 -name '*.cubin' 2>/dev/null | wc -l) - cached_before ))"
    done ) > "$out/warm-progress.txt" 2>/dev/null &
  sampler=$!
  processes=${WARM_PROCESSES:-1}
  if ((processes <= 1)); then
    timeout -k 10 "$warm_seconds" "$runner" batchsolve-warmup --kernels "$manifest" --threads "$threads" \
      > "$out/logs/warm-up.log" 2>&1
    warm_rc=$?
  else
    # Several processes, each with its share of the threads and every processes-th line (the list's
    # order, e.g. longest first, kept within each): in case NVRTC in one process does not scale over
    # 16 threads (the H200 warm-ups compiled far fewer kernels than one build-machine core's times
    # predict).
    per=$(( threads / processes > 0 ? threads / processes : 1 ))
    pids=()
    for ((w = 0; w < processes; w++)); do
      awk -v w="$w" -v k="$processes" 'NF && (NR - 1) % k == w' "$manifest" > "$out/warm-part.$w.txt"
      timeout -k 10 "$warm_seconds" "$runner" batchsolve-warmup --kernels "$out/warm-part.$w.txt" --threads "$per" \
        > "$out/logs/warm-up.$w.log" 2>&1 &
      pids+=($!)
    done
    warm_rc=0
    for pid in "${pids[@]}"; do wait "$pid" || { rc=$?; ((warm_rc == 0 || rc == 124 || rc == 137)) && warm_rc=$rc; }; done
    cat "$out"/logs/warm-up.*.log > "$out/logs/warm-up.log"
    rm -f "$out"/warm-part.*.txt "$out"/logs/warm-up.*.log
    threads="$processes processes x $per"
  fi
  kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null
  cached_after=$(find "$BATCHSOLVE_CACHE_DIR" -maxdepth 1 -name '*.cubin' 2>/dev/null | wc -l)
  warm_s=$(( $(date +%s) - warm_start ))
  warm="warm-up: rc $warm_rc in $warm_s s ($threads threads, $(grep -c . "$manifest") kernels listed, $((cached_after - cached_before)) CUBINs written, $(awk -v k=$((cached_after - cached_before)) -v s=$warm_s 'BEGIN { printf "%.1f", (s > 0 ? k / s : 0) }') per s): $(grep -E '^(warm-up|skipped)' "$out/logs/warm-up.log" | tail -1)"
  ((warm_rc == 124 || warm_rc == 137)) && warm="$warm (time limit ${warm_seconds} s: the rest compiles in the shards)"
else
  warm="warm-up: skipped (no kernel manifest at $manifest: this run records one, $out/suite-kernels.txt)"
fi
echo "run-all: $warm; $shards shards next, $jobs at a time"

# ---- the shards, JOBS at a time, each bounded; every one records the kernels it asks for -------------
export runner out shard_seconds
export MIN_SHARD_SECONDS=${MIN_SHARD_SECONDS:-15}  # a shard is not started with less time than this left
export DEADLINE=$(( start + budget ))
xargs -P "$jobs" -L 1 bash -c '
  label=$0 suite=$1 index=$2 count=$3
  log="$out/logs/$label.$suite.$index.log"
  left=$(( DEADLINE - $(date +%s) ))
  (( left >= MIN_SHARD_SECONDS )) || { echo "nr $label $suite $index"; exit 0; }
  limit=$(( left < shard_seconds ? left : shard_seconds ))
  GTEST_TOTAL_SHARDS=$count GTEST_SHARD_INDEX=$index BATCHSOLVE_KERNEL_MANIFEST="$out/manifests/$suite.$index.txt" \
    timeout -k 10 "$limit" "$runner" "$suite" --gtest_filter="$(cat "$out/filter.$suite")" > "$log" 2>&1
  echo "$? $label $suite $index"' < "$out/shards.list" > "$out/shards.rc"

# ---- one line per suite, then the run ----------------------------------------------------------------
total_pass=0 total_fail=0 total_skip=0 total_timeout=0 total_nr=0 total_other=0
{
  echo "$warm"
  for entry in "${suites[@]}"; do
    read -r label suite count <<<"$entry"
    [[ -f $out/filter.$suite ]] || continue
    logs=("$out"/logs/"$label.$suite".*.log)
    pass=0 fail=0 skip=0
    if compgen -G "$out/logs/$label.$suite.*.log" > /dev/null; then
      pass=$(cat "${logs[@]}" | grep -cE '^\[       OK \] ')
      fail=$(cat "${logs[@]}" | grep -cE '^\[  FAILED  \] .* \([0-9]+ ms\)$')
      skip=$(cat "${logs[@]}" | grep -cE '^\[  SKIPPED \] .* \([0-9]+ ms\)$')
    fi
    timeouts=$(awk -v s="$suite" '$3 == s && ($1 == 124 || $1 == 137)' "$out/shards.rc" | wc -l)
    nr=$(awk -v s="$suite" '$1 == "nr" && $3 == s' "$out/shards.rc" | wc -l)
    other=$(awk -v s="$suite" '$3 == s && $1 != "nr" && $1 != 0 && $1 != 1 && $1 != 124 && $1 != 137' "$out/shards.rc" | wc -l)
    status=ok
    ((fail > 0)) && status=FAILED
    ((timeouts + nr + other > 0)) && [[ $status == ok ]] && status=INCOMPLETE
    printf '%-10s %-36s %-10s %4d passed, %3d failed, %4d skipped; shards of %d: %d timed out (%d s), %d not run, %d crashed\n' \
      "[$label]" "$suite" "$status" "$pass" "$fail" "$skip" "$count" "$timeouts" "$shard_seconds" "$nr" "$other"
    total_pass=$((total_pass + pass)) total_fail=$((total_fail + fail)) total_skip=$((total_skip + skip))
    total_timeout=$((total_timeout + timeouts)) total_nr=$((total_nr + nr)) total_other=$((total_other + other))
  done
  [[ -f $out/absent.list ]] && awk '{ printf "%-10s %-36s %s\n", "[" $1 "]", $2, ($3 == "absent" ? "not in the bundle" : "no GPU tests") }' "$out/absent.list"
  # the failing tests by name (at most 20)
  cat "$out"/logs/*.log 2>/dev/null | grep -E '^\[  FAILED  \] .* \([0-9]+ ms\)$' | head -20
} > "$out/summary.txt"

cat "$out"/manifests/*.txt 2>/dev/null | sort -u > "$out/suite-kernels.txt"
kernels=$(grep -c . "$out/suite-kernels.txt")
rm -rf "$out/manifests"
tar -czf "$out/logs.tar.gz" -C "$out" logs shards.list shards.rc $(cd "$out" && ls warm-progress.txt 2>/dev/null) && rm -rf "$out/logs" "$out"/filter.* "$out/run-from-build" "$out/warm-manifest.txt"
cat "$out/summary.txt"
echo "run-all: $shards shards in $(( $(date +%s) - start )) s: $total_pass passed, $total_fail failed, $total_skip skipped;" \
     "$total_timeout shards timed out, $total_nr not run, $total_other crashed; $kernels kernels recorded ($out/suite-kernels.txt)" |
  tee -a "$out/summary.txt"
if [[ $record_only == 1 ]]; then
  (( kernels > 0 ))
else
  (( total_fail + total_timeout + total_nr + total_other == 0 ))
fi
