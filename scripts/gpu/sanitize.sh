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
# The library's background warm-up runs only cuBLAS/cuSOLVER kernels; under racecheck each of them is
# instrumented beside ours, and the ALS and large-Cholesky jobs did not end in 160 s (6296ebe): off here.
export BATCHSOLVE_LIBRARY_WARMUP=${BATCHSOLVE_LIBRARY_WARMUP:-off}
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
# re-checks, not the new ones. The BLAS-3 jobs run the family's GPU tests (their reference is the CPU
# backend) instead of the tester, whose per-problem cuBLAS reference kept memcheck and racecheck past
# 45 s at x 48 (H200, call 1 of 2026-12-02); posv_mixed at one condition and named designs (all 60
# rows of --all-variants took > 45 s under every tool).
V="batchsolve_vbatched_blas_test --gtest_filter"
cat > "$out/jobs.txt" <<JOBS
refinement: posv_mixed FP32/TF32 factors, classical + GMRES (d, n 128)|$T --routine posv_mixed --precision d --cond 100 --designs auto,fp32/classical,tf32/gmres --n 128 --batch 1 --cpu-max 1024
refinement: posv_mixed BF16/FP16/split factors, blocked GMRES (d, n 128)|$T --routine posv_mixed --precision d --cond 100 --designs bf16/classical,fp16/gmres/blocked512,fp16_split/gmres --n 128 --batch 1 --cpu-max 1024
LDLT sytrf_nopiv (d, n 128)|$T --routine sytrf_nopiv --precision d --n 128 --batch 2
butterflies + LDLT refinement: sysv_mixed (d, n 128)|$T --routine sysv_mixed --all-variants --precision d --n 128 --batch 2
layout conversion (unit suite, GPU tests)|batchsolve_layout_test --gtest_filter=ConvertLayout/4.*:ConvertLayout/5.*:ConvertLayout/6.*:ConvertLayout/7.*
ALS gather + normal equations (GPU test, both build kernels)|test_als --gtest_filter=Gpu.AgreesWithTheCpuOnTheSameSeed
ALS training (GPU test)|test_als --gtest_filter=Gpu.RecoversThePlantedMatrix
DVC interpolation / IC-GN (GPU tests)|test_dvc_stages --gtest_filter=Gpu*
large POTF2 leaves + graph path (d, n 512)|$T --routine potrf_large --precision d --n 512 --batch 1 --cpu-max 1024 --designs right+lookahead/nb128/leaf/trsm,left/nb128/leaf/trsm
large recursive, cuSOLVER diagonal blocks, inverse panel (d, n 512)|$T --routine potrf_large --precision d --n 512 --batch 1 --cpu-max 1024 --designs recursive/nb128/leaf/trsm,recursive/nb256/inverse
large potrs (d, n 512)|$T --routine potrs_large --precision d --n 512 --batch 1 --cpu-max 1024
gemm_vbatched (GPU tests: d every transpose, size bins; s/d tensor-core tiles)|$V=VbatchedBlas/5.GemmExactEveryTransposeWithZeroSizes:VbatchedBlas/5.GemmSizeBinsExactAtEveryLevel:VbatchedBlas/4.GemmTensorCoreConfigurationsWithinTheirAccuracy:VbatchedBlas/5.GemmTensorCoreConfigurationsWithinTheirAccuracy
syrk/syr2k_vbatched (GPU tests: d every option)|$V=VbatchedBlas/5.SyrkHerkExactEveryOption:VbatchedBlas/5.Syr2kHer2kExactEveryOption
herk/her2k_vbatched (GPU tests: c every option)|$V=VbatchedBlas/6.SyrkHerkExactEveryOption:VbatchedBlas/6.Syr2kHer2kExactEveryOption
symm_vbatched (GPU test: d every option, other triangle not read)|$V=VbatchedBlas/5.SymmHemmExactEveryOptionOtherTriangleNotRead
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
# SANITIZE_ONLY (an extended regular expression over the family names) and SANITIZE_TOOLS (a
# comma-separated subset) narrow the call, e.g. to what an earlier call left timed out
if [[ -n ${SANITIZE_ONLY:-} ]]; then
  grep -E -- "^[^|]*(${SANITIZE_ONLY})" "$out/jobs.txt" > "$out/jobs.only" || :
  mv "$out/jobs.only" "$out/jobs.txt"
fi
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
[[ -n ${SANITIZE_TOOLS:-} ]] && IFS=, read -r -a tools <<<"$SANITIZE_TOOLS"
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
  # racecheck, the slowest tool (shared-memory accesses of every thread), gets RACECHECK_S (75 s).
  local cap=${TASK_S:-45}; [[ $tool == racecheck ]] && cap=${RACECHECK_S:-75}; ((left > cap)) && left=$cap
  timeout -k 5 "$left" "$sanitizer" --tool "$tool" "${extra[@]}" --print-limit 20 --error-exitcode 99 \
    $run $cmd > "$log" 2>&1
  local rc=$? errors hazards total ours library kernels
  errors=$(grep -oE 'ERROR SUMMARY: [0-9]+' "$log" | awk '{s += $3} END {print s + 0}')
  hazards=$(grep -oE 'RACECHECK SUMMARY: [0-9]+ hazard' "$log" | awk '{s += $3} END {print s + 0}')
  # the printed reports by launcher (a run cut by its limit prints no summary: its reports still count)
  IFS=$'\t' read -r total ours library kernels < <(python3 scripts/gpu/sanitize_reports.py "$log")
  ((errors + hazards == 0 && total > 0)) && errors=$total
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
  if ((errors + hazards > 0)); then
    state="REPORTED"
    # every printed report in a kernel an NVIDIA library launched (e.g. cuSOLVER's geqrf in the
    # tester's matrix generation): not a batchsolve kernel, listed apart
    ((ours == 0 && library > 0)) && state="library only"
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$family" "$tool" "$state" "$errors" "$hazards" "$kernels" > "$log.row"
}
export -f task
export out sanitizer run deadline=$(( start_epoch + budget - 5 ))
tr '\n' '\0' < "$out/tasks.txt" | xargs -0 -P "$jobs" -I{} bash -c 'task "$1"' _ {}

printf 'family\ttool\tstate\terrors\thazards\treported\n' > "$out/summary.tsv"
for i in $(seq 0 $((i - 1))); do for tool in "${tools[@]}"; do
  cat "$out/logs/$i.$tool.log.row" 2>/dev/null || printf '%s\t%s\tnot run\t\t\n' "job $i" "$tool"
done; done >> "$out/summary.tsv"
{
  echo "# compute-sanitizer per kernel family ($gpu; commit $commit; $((SECONDS - start)) s)"
  echo; echo "| family | tool | state | errors | hazards | reported (kind @ kernel [launcher] x count) |"
  echo "| --- | --- | --- | ---: | ---: | --- |"
  tail -n +2 "$out/summary.tsv" | awk -F'\t' '{ printf "| %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6 }'
  echo
  echo "plain runs (no tool, kernels into the cache): $(awk -F'\t' '$2 != 0 { printf "%s rc %s; ", $1, $2 }' "$out/plain.tsv")$(awk -F'\t' '$2 == 0' "$out/plain.tsv" | wc -l) of $(grep -c . "$out/jobs.txt") exit 0"
  awk -F'\t' 'NR > 1 { n[$3]++ } END { for (s in n) printf "%s: %d  ", s, n[s]; print "" }' "$out/summary.tsv"
} > "$out/summary.md"
# targets.json: per family, 0 errors and 0 hazards in batchsolve's kernels under all four tools, each
# run to its end (a timed-out or skipped tool is not met; reports only in NVIDIA libraries' kernels are
# met and say so)
python3 - "$out/summary.tsv" > "$out/targets.json" <<'PY'
import json, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]).readlines()[1:]]
families = {}
for r in rows:
    r += [""] * (6 - len(r))
    families.setdefault(r[0], []).append(r)
out = []
for family, rs in families.items():
    states = {r[1]: r[2] for r in rs}
    met = all(s in ("ok", "library only") for s in states.values())
    out.append({"target": f"{family}: 0 errors, 0 hazards under memcheck, racecheck, initcheck, synccheck",
                "measured": states, "met": met,
                "reported": "; ".join(r[5] for r in rs if r[5])})
print(json.dumps(out, indent=1))
PY
tar -C "$out" -cJf "$out/logs.tar.xz" logs jobs.txt && rm -rf "$out/logs" "$out/run-from-build"
cat "$out/summary.md"
