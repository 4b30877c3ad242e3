#!/usr/bin/env bash
# compute-sanitizer (memcheck, racecheck, initcheck, synccheck) over one representative
# configuration per kernel family, including the former race cases (column-major batch 600; double
# n = 64 with the FP64 tensor-core update), through the tester and the suites' GPU tests, in one
# device call. Run from the repository root, bundle unpacked at /tmp/bundle:
#   scripts/gpu/sanitize.sh            (budget SANITIZE_BUDGET_S, default 200 s; jobs end by then)
# Results: $OUT/sanitize/{summary.md,summary.tsv,logs.tar.xz}; the table last. 0 errors and 0 hazards
# are expected in every row; a row that timed out or did not run says so (it is not clean).
# Replaces scripts/sanitize-gpu.sh (every configuration class of the tables: too long for one call).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}/sanitize
budget=${SANITIZE_BUDGET_S:-200}
jobs=${JOBS:-8}
run=${RUN:-/tmp/bundle/run}
rm -rf "$out"; mkdir -p "$out/logs"
start=$SECONDS
export BATCHSOLVE_CACHE_DIR=${BATCHSOLVE_CACHE_DIR:-/tmp/batchsolve-cache}; mkdir -p "$BATCHSOLVE_CACHE_DIR"
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
commit=${BATCHSOLVE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
{ echo "gpu: $gpu"; echo "commit: $commit"; "$sanitizer" --version 2>&1 | tail -2; } | tee "$out/versions.txt"
if ! "$sanitizer" --version > /dev/null 2>&1; then
  echo "sanitize: no compute-sanitizer on this machine ($sanitizer)"; exit 2
fi
# The device must accept the sanitizer (some virtualised hosts refuse it): one tiny probe first.
if ! timeout 90 "$sanitizer" --tool memcheck --error-exitcode 99 "$run" tester --routine potrf --precision s \
    --n 8 --batch 4 --repeat 1 --warmup 0 --backend cuda > "$out/logs/probe.log" 2>&1; then
  echo "sanitize: compute-sanitizer does not run on this device (probe below); nothing measured"
  tail -8 "$out/logs/probe.log"; tar -C "$out" -cJf "$out/logs.tar.xz" logs; exit 2
fi

T="tester --repeat 1 --warmup 0 --backend cuda --check --seed 43"
# family | program and arguments (run under each tool)
cat > "$out/jobs.txt" <<JOBS
column-major register (s, n 8, batch 33)|$T --routine potrf,posv,potrs --layout column_major --precision s --n 8 --batch 33 --nrhs 3
column-major pointer array (d, n 33)|$T --routine potrf,posv --layout pointer_array --precision d --n 33 --batch 33 --nrhs 2
column-major former race: batch 600 (s, n 64)|$T --routine potrf,posv --layout column_major --precision s --n 64 --batch 600 --nrhs 2
column-major former race: d n 64 tensor-core staged|$T --routine potrf,posv --layout column_major --precision d --n 64 --batch 96 --nrhs 2
column-major staged (d, n 128)|$T --routine potrf,potrs --layout column_major --precision d --n 128 --batch 32 --nrhs 2
interleaved (s/d, n 16)|$T --routine potrf,posv --layout interleaved --precision s,d --n 16 --batch 64 --nrhs 2
chunked / cooperative (d, n 100)|$T --routine potrf,posv --layout chunked --chunk 32 --precision d --n 100 --batch 64 --nrhs 2
interleaved n 128 (d)|$T --routine posv --layout interleaved --precision d --n 128 --batch 64 --nrhs 2
shared-memory column-major (d, n 200)|$T --routine potrf,posv --layout column_major --precision d --n 200 --batch 16 --nrhs 2
gemm_vbatched|$T --routine gemm_vbatched --precision d --batch 24 --cpu-max-x 96
syrk_vbatched|$T --routine syrk_vbatched --precision d --batch 24 --cpu-max-x 96
syr2k_vbatched|$T --routine syr2k_vbatched --precision s --batch 24 --cpu-max-x 96
symm_vbatched|$T --routine symm_vbatched --precision d --batch 24 --cpu-max-x 96
trsm_vbatched|$T --routine trsm_vbatched --precision d --batch 24 --cpu-max-x 96
trmm_vbatched|$T --routine trmm_vbatched --precision s --batch 24 --cpu-max-x 96
potrf_vbatched|$T --routine potrf_vbatched --precision d --batch 24 --cpu-max-x 96
large POTF2 + graph path (d, n 1024)|$T --routine potrf_large --all-variants --precision d --n 1024 --batch 1 --cpu-max 1024
large potrs (d, n 1024)|$T --routine potrs_large --precision d --n 1024 --batch 1 --cpu-max 1024
refinement: posv_mixed (n 512)|$T --routine posv_mixed --all-variants --n 512 --batch 1 --cpu-max 1024
LDLT sytrf_nopiv (d, n 256)|$T --routine sytrf_nopiv --precision d --n 256 --batch 4
butterflies + LDLT refinement: sysv_mixed (n 256)|$T --routine sysv_mixed --all-variants --n 256 --batch 4
layout conversion (unit suite, GPU tests)|batchsolve_layout_test --gtest_filter=ConvertLayout/4.*:ConvertLayout/5.*:ConvertLayout/6.*:ConvertLayout/7.*
ALS gather (GPU tests)|test_als --gtest_filter=Gpu*
DVC interpolation / IC-GN (GPU tests)|test_dvc_stages --gtest_filter=Gpu*
JOBS
tools=(memcheck racecheck initcheck synccheck)
: > "$out/tasks.txt"
i=0
while IFS='|' read -r family cmd; do
  for tool in "${tools[@]}"; do echo "$i|$tool|$family|$cmd" >> "$out/tasks.txt"; done
  i=$((i + 1))
done < "$out/jobs.txt"

task() {  # one line of tasks.txt
  IFS='|' read -r i tool family cmd <<<"$1"
  set -f  # the gtest filters' * are not file names
  local log="$out/logs/$i.$tool.log" left=$((deadline - $(date +%s)))
  if ((left < 10)); then printf '%s\t%s\tnot run\t\t\n' "$family" "$tool" > "$log.row"; return; fi
  local extra=()
  case $tool in
    memcheck) extra=(--leak-check no) ;;
    racecheck) extra=(--racecheck-report hazard) ;;
    initcheck) extra=() ;;  # compute-sanitizer 2025.3: --track-unused-memory is a flag, not "no"
  esac
  # shellcheck disable=SC2086
  # One job at most TASK_S (default 75 s): racecheck of the BLAS-3 and large kernels took past the
  # whole budget on an H200 and left later families not run.
  local cap=${TASK_S:-75}; ((left > cap)) && left=$cap
  timeout -k 5 "$left" "$sanitizer" --tool "$tool" "${extra[@]}" --print-limit 20 --error-exitcode 99 \
    $run $cmd > "$log" 2>&1
  local rc=$? errors hazards
  errors=$(grep -oE 'ERROR SUMMARY: [0-9]+' "$log" | awk '{s += $3} END {print s + 0}')
  hazards=$(grep -oE 'RACECHECK SUMMARY: [0-9]+ hazard' "$log" | awk '{s += $3} END {print s + 0}')
  local state=ok
  ((rc == 124 || rc == 137)) && state="timed out"
  ((rc != 0 && rc != 99 && rc != 124 && rc != 137)) && state="rc $rc"
  grep -q 'FAILED' "$log" && [[ $state == ok ]] && state="check FAILED"
  grep -qiE 'device.*not supported|unable to (attach|launch)|Target application returned an error' "$log" &&
    [[ $state == ok && $errors == 0 ]] && state="rc $rc"
  # a tester row or gtest test that skipped did not run its kernels under the tool
  grep -qE 'rows: .*, [1-9][0-9]* skipped|^\[  SKIPPED \]' "$log" && [[ $state == ok ]] && state="skipped"
  ((errors + hazards > 0)) && state="REPORTED"
  printf '%s\t%s\t%s\t%s\t%s\n' "$family" "$tool" "$state" "$errors" "$hazards" > "$log.row"
}
export -f task
export out sanitizer run deadline=$(( $(date +%s) + budget - 5 ))
tr '\n' '\0' < "$out/tasks.txt" | xargs -0 -P "$jobs" -I{} bash -c 'task "$1"' _ {}

printf 'family\ttool\tstate\terrors\thazards\n' > "$out/summary.tsv"
for i in $(seq 0 $((i - 1))); do for tool in "${tools[@]}"; do
  cat "$out/logs/$i.$tool.log.row" 2>/dev/null || printf '%s\t%s\tnot run\t\t\n' "job $i" "$tool"
done; done >> "$out/summary.tsv"
{
  echo "# compute-sanitizer per kernel family ($gpu; commit $commit; $((SECONDS - start)) s)"
  echo; echo "| family | tool | state | errors | hazards |"; echo "| --- | --- | --- | ---: | ---: |"
  tail -n +2 "$out/summary.tsv" | awk -F'\t' '{ printf "| %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5 }'
  echo
  awk -F'\t' 'NR > 1 { n[$3]++ } END { for (s in n) printf "%s: %d  ", s, n[s]; print "" }' "$out/summary.tsv"
  # the kernels named in reports (at most 20 lines)
  grep -hE '^=+ +(Invalid|Race|Error|Uninitialized|Barrier|.*hazard)' "$out"/logs/*.log 2>/dev/null | sort | uniq -c | sort -rn | head -20
} > "$out/summary.md"
tar -C "$out" -cJf "$out/logs.tar.xz" logs jobs.txt && rm -rf "$out/logs"
cat "$out/summary.md"
