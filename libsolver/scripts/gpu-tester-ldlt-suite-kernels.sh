#!/usr/bin/env bash
# Three GPU checks in one call of about 80 s (most important first): the tester's small-n speed-ups
# against earlier H200 runs, the LDL^T's complex CUDA instances, and the GPU suites' kernel list.
#  1. tester: potrs and posv, s and d, interleaved / chunked / column-major, n = 8, 16, 32, batch 16384,
#     cuSOLVER side by side (the a611ee2 H200 run's command, narrowed), compared with the H200 runs
#     at a611ee2 (n = 8 potrs/posv interleaved/chunked at 0.80-0.89 of 12f7b85's speed-up) and 12f7b85
#     (compare_tester.py: speed-up over cuSOLVER new / reference; n = 16 has no reference row). The
#     per-call host path lost its allocations since (interleaved launchers' cached resolution, lazy
#     argument-check texts, launch error texts).
#  2. LDL^T, c/z CUDA instances (Ldlt/6, Ldlt/7 = cuda_c, cuda_z; SysvMixed/3 = z via c), then the
#     zero-diagonal case of d and z four times with fresh seeds and once with each seed that failed
#     (z 11800589031403369438 at n = 2, 34; d 18435474758635866584 at n = 96), with
#     BATCHSOLVE_LDLT_TRACE=1: one line per pivoted solve says whether cuSOLVER's sytrf + Xsytrs route
#     gave a finite solution (now solved with ldb = n) or LU took over; then the TF32 refinement's pass
#     counts of fresh seeds (TensorCoreUpdatesStillConverge, bound 10) x4.
#  3. the GPU suites' kernel list: run-all.sh RECORD_ONLY=1 (nothing compiled; the tests fail fast by
#     design), suite-kernels.txt to commit as libsolver/tests/gpu/suite-kernels.txt for run-all.sh's
#     warm-up of a later call.
# Each step gets what is left of TOTAL_SECONDS (default 84; a killed step takes up to 5 s more). Run from the repository root with the
# bundle at /tmp/bundle. Files (6): $OUT/tester-ldlt-kernels/{tester.json, vs-a611ee2.md, vs-12f7b85.md,
# ldlt-trace.txt, suite-kernels.txt, logs.tar.gz (tester.log, ldlt.txt, run-all-record.txt,
# summary.txt)}; the summary is printed last.
set -uo pipefail
out=${OUT:-/tmp/out}/tester-ldlt-kernels
mkdir -p "$out"
run=${RUN:-/tmp/bundle/run}
export BATCHSOLVE_CACHE_DIR=${BATCHSOLVE_CACHE_DIR:-/tmp/batchsolve-cache}
mkdir -p "$BATCHSOLVE_CACHE_DIR"
export OMP_WAIT_POLICY=passive
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
commit=$(git rev-parse --short HEAD 2>/dev/null || echo "${BATCHSOLVE_COMMIT:-unknown}")
summary=("== tester, LDL^T c/z, suite kernels on ${gpu:-no GPU?} at $commit")
t0=$(date +%s)
total_s=${TOTAL_SECONDS:-84}  # the request's budget: each step gets min(its limit, what is left)
limit() {  # limit STEP_SECONDS: seconds for the next step, 0 when too little is left
  local left=$(( total_s - ($(date +%s) - t0) ))
  (( left >= 5 )) || { echo 0; return; }
  echo $(( left < $1 ? left : $1 ))
}

# ---- 1. tester ---------------------------------------------------------------------------------------
timeout -k 5 "$(limit 40)" "$run" tester --routine potrs,posv --precision s,d --layout interleaved,chunked,column_major \
  --n 8,16,32 --batch 16384 --distinct 2048 --ref cusolver --repeat 10 --jobs 16 --json "$out/tester.json" \
  > "$out/tester.log" 2>&1
rc=$?
summary+=("tester (rc $rc, $(( $(date +%s) - t0 )) s): $(grep -E '^tester: ' "$out/tester.log" | tail -1)")
if [[ -s $out/tester.json ]]; then
  for ref in a611ee2:results/2026-11-27-h200-a611ee2-tester-issue21/tester.json \
             12f7b85:results/2026-11-26-h200-12f7b85-arch-tester-first-call/tester.json; do
    name=${ref%%:*} file=${ref#*:}
    [[ -s $file ]] || { summary+=("vs $name: no reference file $file"); continue; }
    line=$(python3 libsolver/tests/codegen/compare_tester.py "$out/tester.json" "$file" --markdown "$out/vs-$name.md" 2>&1 | tail -1)
    summary+=("vs $name: $line")
    # the rows of the issue: n = 8 potrs/posv, interleaved and chunked
    [[ -s $out/vs-$name.md ]] && summary+=("$(grep -E '^\| (potrs|posv) \| [sd] \| (interleaved|chunked) \| 8 \|' "$out/vs-$name.md" |
      awk -F'|' '{ printf "  n=8 %s %s %s: ratio %s (%s)\n", $2, $3, $4, $10, $11 }' | sed 's/  */ /g')")
  done
fi

# ---- 2. LDL^T ----------------------------------------------------------------------------------------
t1=$(date +%s)
lim=$(limit 25)
((lim > 0)) && timeout -k 5 "$lim" "$run" batchsolve_ldlt_test --gtest_filter='Ldlt/6.*:Ldlt/7.*:SysvMixed/3.*' > "$out/ldlt.txt" 2>&1
rc=$?
summary+=("ldlt c/z CUDA (rc $rc, $(( $(date +%s) - t1 )) s): $(grep -E '^\[  (PASSED|FAILED) +\] [0-9]+ test' "$out/ldlt.txt" | tr '\n' ' ')")
summary+=("$(grep -E '^\[  FAILED  \] .*\([0-9]+ ms\)$' "$out/ldlt.txt" | head -8)")
: > "$out/ldlt-trace.txt"
zero='SysvMixed/2.ZeroDiagonalNeedsButterfliesAndSaysSo:SysvMixed/3.ZeroDiagonalNeedsButterfliesAndSaysSo'
{
  echo "### fresh seeds, 4 repeats"
  lim=$(limit 14); ((lim > 0)) &&
  BATCHSOLVE_LDLT_TRACE=1 timeout -k 5 "$lim" "$run" batchsolve_ldlt_test --gtest_filter="$zero" --gtest_repeat=4 2>&1
  echo "### z seed 11800589031403369438"
  lim=$(limit 8); ((lim > 0)) &&
  BATCHSOLVE_LDLT_TRACE=1 BATCHSOLVE_TEST_SEED=11800589031403369438 timeout -k 5 "$lim" "$run" batchsolve_ldlt_test \
    --gtest_filter='SysvMixed/3.ZeroDiagonalNeedsButterfliesAndSaysSo' 2>&1
  echo "### d seed 18435474758635866584"
  lim=$(limit 8); ((lim > 0)) &&
  BATCHSOLVE_LDLT_TRACE=1 BATCHSOLVE_TEST_SEED=18435474758635866584 timeout -k 5 "$lim" "$run" batchsolve_ldlt_test \
    --gtest_filter='SysvMixed/2.ZeroDiagonalNeedsButterfliesAndSaysSo' 2>&1
} >> "$out/ldlt-trace.txt"
{
  echo "### TF32 refinement passes, d and z, fresh seeds (the test's bound: 10)"
  lim=$(limit 12); ((lim > 0)) &&
  timeout -k 5 "$lim" "$run" batchsolve_ldlt_test --gtest_repeat=4 \
    --gtest_filter='SysvMixed/2.TensorCoreUpdatesStillConverge:SysvMixed/3.TensorCoreUpdatesStillConverge' 2>&1
} >> "$out/ldlt-trace.txt"
summary+=("ldlt TF32 refinement passes (fresh seeds): $(grep -E '^\[ measure  \]' "$out/ldlt-trace.txt" |
  sed -n 's/.*: \([0-9]*\) refinement passes.*/\1/p' | sort -n | uniq -c | awk '{ printf "%s x %s, ", $1, $2 }')")
pivoted=$(grep -c 'ldlt pivoted:' "$out/ldlt-trace.txt")
bad=$(grep 'ldlt pivoted:' "$out/ldlt-trace.txt" | grep -cvE 'sytrf info 0 sytrs info 0 non-finite 0')
ok_runs=$(grep -cE '^\[       OK \] SysvMixed/[0-9]+\.ZeroDiagonal' "$out/ldlt-trace.txt")
failed_runs=$(grep -cE '^\[  FAILED  \] SysvMixed/[0-9]+\.ZeroDiagonal.*\([0-9]+ ms\)$' "$out/ldlt-trace.txt")
summary+=("ldlt zero-diagonal (trace): $ok_runs runs ok, $failed_runs failed; $pivoted pivoted solves, $bad of them not solved by sytrf + Xsytrs (LU took over)")
summary+=("$(grep 'ldlt pivoted:' "$out/ldlt-trace.txt" | grep -vE 'non-finite 0' | sort | uniq -c | head -6)")


# ---- 3. the GPU suites' kernel list (run-all.sh RECORD_ONLY=1: nothing compiled, tests fail fast) ----
lim=$(limit 20)
if ((lim >= 10)); then
  OUT=/tmp/tester-ldlt-kernels-run-all RECORD_ONLY=1 BUDGET_SECONDS=$((lim - 3)) SHARD_SECONDS=$((lim - 5)) MIN_SHARD_SECONDS=2 JOBS=8 \
    bash libsolver/tests/gpu/run-all.sh > /tmp/tester-ldlt-kernels-run-all.txt 2>&1
  cp /tmp/tester-ldlt-kernels-run-all/run-all/suite-kernels.txt "$out/suite-kernels.txt" 2>/dev/null
  cp /tmp/tester-ldlt-kernels-run-all.txt "$out/run-all-record.txt"
  summary+=("suites' kernels (record only, $lim s): $(tail -1 /tmp/tester-ldlt-kernels-run-all.txt)")
else
  summary+=("suites' kernels: not recorded (time left ${lim} s)")
fi

summary+=("total $(( $(date +%s) - t0 )) s; files in $out")
printf '%s\n' "${summary[@]}" | grep -v '^$' > "$out/summary.txt"
( cd "$out" && tar -czf logs.tar.gz $(ls tester.log ldlt.txt run-all-record.txt summary.txt 2>/dev/null) &&
  rm -f tester.log ldlt.txt run-all-record.txt )
cat "$out/summary.txt" && rm -f "$out/summary.txt"
