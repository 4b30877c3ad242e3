#!/usr/bin/env bash
# compute-sanitizer (memcheck, racecheck, initcheck, synccheck) over one representative
# configuration per kernel family, including the former race cases (column-major batch 600; double
# n = 64 with the FP64 tensor-core update), through the tester and the suites' GPU tests, in one
# device call. Run from the repository root, bundle unpacked at /tmp/bundle:
#   scripts/gpu/sanitize.sh            (budget SANITIZE_BUDGET_S, default 200 s; jobs end by then)
# Dry run on a build machine (no GPU: the tester skips its GPU rows; checks the script):
#   BUILD_DIR=build SANITIZER=/path/to/stand-in scripts/gpu/sanitize.sh
# Results: $OUT/sanitize/{summary.md,summary.tsv,logs.tar.xz}; the table last. 0 errors and 0 hazards
# are expected in every row; a row that timed out or did not run says so (it is not clean).
# Replaces scripts/sanitize-gpu.sh (every configuration class of the tables: too long for one call).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}/sanitize
budget=${SANITIZE_BUDGET_S:-200}
jobs=${JOBS:-12}
rm -rf "$out"; mkdir -p "$out/logs"
run=${RUN:-/tmp/bundle/run}
if [[ -n ${BUILD_DIR:-} ]]; then  # dry run: the build tree's executables stand in for the bundle's
  run=$out/run-from-build
  printf '#!/usr/bin/env bash\nname=$1; shift\nexe=$(find "%s" -type f -name "$name" -perm -u+x | head -1)\n[[ -n $exe ]] || exit 127\nexec "$exe" "$@"\n' \
    "$(cd "$BUILD_DIR" && pwd)" > "$run"
  chmod +x "$run"
fi
start=$SECONDS start_epoch=$(date +%s)
export BATCHSOLVE_CACHE_DIR=${BATCHSOLVE_CACHE_DIR:-/tmp/batchsolve-cache}; mkdir -p "$BATCHSOLVE_CACHE_DIR"
sanitizer=${SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
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
# family | program and arguments (run under each tool). Small cases: racecheck and initcheck slow a
# kernel down 100-1000x, and at the tester's default sizes (vbatched x up to 512 in 5 rows, large n =
# 1024) racecheck of GEMM and the large routines ran past 75 s on an H200. Every family keeps one
# configuration of each kernel class it launches (a vbatched row with --n 48 has sizes 1..48: the
# edge tiles and the full ones). The families never sanitized come first, then those whose
# racecheck timed out, then the Cholesky kernels (clean at a6216bc), so that a cut run loses the
# re-checks, not the new ones.
cat > "$out/jobs.txt" <<JOBS
refinement: posv_mixed (n 256)|$T --routine posv_mixed --all-variants --n 256 --batch 1 --cpu-max 1024
LDLT sytrf_nopiv (d, n 128)|$T --routine sytrf_nopiv --precision d --n 128 --batch 2
butterflies + LDLT refinement: sysv_mixed (d, n 128)|$T --routine sysv_mixed --all-variants --precision d --n 128 --batch 2
layout conversion (unit suite, GPU tests)|batchsolve_layout_test --gtest_filter=ConvertLayout/4.*:ConvertLayout/5.*:ConvertLayout/6.*:ConvertLayout/7.*
ALS gather (GPU tests)|test_als --gtest_filter=Gpu*
DVC interpolation / IC-GN (GPU tests)|test_dvc_stages --gtest_filter=Gpu*
large POTF2 + graph path (d, n 512)|$T --routine potrf_large --all-variants --precision d --n 512 --batch 1 --cpu-max 1024
large potrs (d, n 512)|$T --routine potrs_large --precision d --n 512 --batch 1 --cpu-max 1024
gemm_vbatched (d, x 48)|$T --routine gemm_vbatched --precision d --n 48 --batch 8 --cpu-max-x 48
syrk_vbatched (d, x 48)|$T --routine syrk_vbatched --precision d --n 48 --batch 8 --cpu-max-x 48
syr2k_vbatched (s, x 48)|$T --routine syr2k_vbatched --precision s --n 48 --batch 8 --cpu-max-x 48
symm_vbatched (d, x 48)|$T --routine symm_vbatched --precision d --n 48 --batch 8 --cpu-max-x 48
trsm_vbatched (d, x 48)|$T --routine trsm_vbatched --all-variants --precision d --n 48 --batch 8 --cpu-max-x 48
trmm_vbatched (s, x 48)|$T --routine trmm_vbatched --precision s --n 48 --batch 8 --cpu-max-x 48
potrf_vbatched (d, x 48)|$T --routine potrf_vbatched --precision d --n 48 --batch 8 --cpu-max-x 48
column-major former race: batch 600 (s, n 64)|$T --routine potrf,posv --layout column_major --precision s --n 64 --batch 600 --nrhs 2
column-major former race: d n 64 tensor-core staged|$T --routine potrf,posv --layout column_major --precision d --n 64 --batch 96 --nrhs 2
column-major register (s, n 8, batch 33)|$T --routine potrf,posv,potrs --layout column_major --precision s --n 8 --batch 33 --nrhs 3
column-major pointer array (d, n 33)|$T --routine potrf,posv --layout pointer_array --precision d --n 33 --batch 33 --nrhs 2
column-major staged (d, n 128)|$T --routine potrf,potrs --layout column_major --precision d --n 128 --batch 32 --nrhs 2
interleaved (s/d, n 16)|$T --routine potrf,posv --layout interleaved --precision s,d --n 16 --batch 64 --nrhs 2
chunked / cooperative (d, n 100)|$T --routine potrf,posv --layout chunked --chunk 32 --precision d --n 100 --batch 64 --nrhs 2
interleaved n 128 (d)|$T --routine posv --layout interleaved --precision d --n 128 --batch 64 --nrhs 2
shared-memory column-major (d, n 200)|$T --routine potrf,posv --layout column_major --precision d --n 200 --batch 16 --nrhs 2
JOBS
# Each job once without a tool first, all at once (bounded by PREFILL_S, default 35 s): its kernels
# are then compiled once, on every core, into the disk cache, instead of by each of the four tools'
# runs side by side (NVRTC is host work the tools do not slow; it was most of a tool run's time).
# The plain run's exit code is kept (plain.tsv): a job that fails without a tool is no sanitizer finding.
prefill_s=${PREFILL_S:-35}
: > "$out/plain.tsv"
i=0
while IFS='|' read -r family cmd; do
  ( set -f; timeout -k 5 "$prefill_s" $run $cmd < /dev/null > "$out/logs/$i.plain.log" 2>&1
    printf '%s\t%s\n' "$family" "$?" >> "$out/plain.tsv" ) &
  i=$((i + 1))
done < "$out/jobs.txt"
wait
echo "sanitize: plain runs (kernels into the cache) in $((SECONDS - start)) s: $(awk -F'\t' '$2 == 0' "$out/plain.tsv" | wc -l) of $i exit 0, $(awk -F'\t' '$2 == 124 || $2 == 137' "$out/plain.tsv" | wc -l) cut at ${prefill_s} s"
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
  # One job at most TASK_S (default 45 s): one slow job must not hold a slot for the budget (at the
  # tester's default sizes racecheck of the BLAS-3 and large kernels did, and later families were
  # not run).
  local cap=${TASK_S:-45}; ((left > cap)) && left=$cap
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
  # a tester row the CPU backend answered ran no kernel under the tool either
  grep -q '(CPU backend' "$log" && [[ $state == ok ]] && state="skipped (CPU backend)"
  ((errors + hazards > 0)) && state="REPORTED"
  printf '%s\t%s\t%s\t%s\t%s\n' "$family" "$tool" "$state" "$errors" "$hazards" > "$log.row"
}
export -f task
export out sanitizer run deadline=$(( start_epoch + budget - 5 ))
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
  echo "plain runs (no tool, kernels into the cache): $(awk -F'\t' '$2 != 0 { printf "%s rc %s; ", $1, $2 }' "$out/plain.tsv")$(awk -F'\t' '$2 == 0' "$out/plain.tsv" | wc -l) of $(grep -c . "$out/jobs.txt") exit 0"
  awk -F'\t' 'NR > 1 { n[$3]++ } END { for (s in n) printf "%s: %d  ", s, n[s]; print "" }' "$out/summary.tsv"
  # the kernels named in reports (at most 20 lines)
  grep -hE '^=+ +(Invalid|Race|Error|Uninitialized|Barrier|.*hazard)' "$out"/logs/*.log 2>/dev/null | sort | uniq -c | sort -rn | head -20
} > "$out/summary.md"
tar -C "$out" -cJf "$out/logs.tar.xz" logs jobs.txt && rm -rf "$out/logs" "$out/run-from-build"
cat "$out/summary.md"
