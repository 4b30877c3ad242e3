#!/usr/bin/env bash
# The code generators' checks on the GPU machine (issue 21's one prelude, issue 22's non-finite pivots
# and races), from the repository root with the bundle unpacked at /tmp/bundle. Three steps, each
# bounded; results under $OUT/arch-gen/, a short summary printed last.
#
#   1 tester     potrf, potrs, posv x s, d x interleaved, chunked, column_major x n = 8, 32, 128,
#                batch 16384 (2048 distinct matrices), cuSOLVER side by side; compared row by row with the committed
#                run of the same command at 12f7b85 (before the prelude change) by compare_tester.py:
#                the library's speed-up over cuSOLVER, new / reference
#   2 sanitize   compute-sanitizer racecheck, memcheck, initcheck, synccheck of issue 22's cases:
#                potrf and posv, column-major, batch 600, s n = 128 and d n = 64 (the tuned staged
#                kernels: s nb 8, 2 warps, 2 matrices per block; d the same on tensor cores)
#   3 suites     the non-finite suite and the GPU suites of the generators, one process per test,
#                JOBS (8) at a time, CUDA instances only; SUITES_FILTER / SUITES_SKIP (regular
#                expressions over "executable Suite.Test") select a shard; beside step 2 (neither is timed)
#
# Files: tester.json, tester-vs-reference.md, logs.tar.gz (everything else).
# Knobs (seconds): TESTER_S (default 80), SANITIZE_S (70), SUITES_S (70), TEST_TIMEOUT (per test,
# default SUITES_S); STEPS (default "tester sanitize suites"); SUITES (default: nonfinite,
# cooperative, jit, column-major GPU suites); REFERENCE (the tester JSON to compare with). About
# TESTER_S + max(SANITIZE_S, SUITES_S) + 15 s in all.
set -uo pipefail
cd "$(dirname "$0")/../../.."
bundle=${BATCHSOLVE_BUNDLE_DIR:-/tmp/bundle}
out=${OUT:-/tmp/out}/arch-gen
mkdir -p "$out"
export BATCHSOLVE_CACHE_DIR=${BATCHSOLVE_CACHE_DIR:-/tmp/batchsolve-cache}
mkdir -p "$BATCHSOLVE_CACHE_DIR"
steps=${STEPS:-tester sanitize suites}
tester_s=${TESTER_S:-80} sanitize_s=${SANITIZE_S:-70} suites_s=${SUITES_S:-70}
reference=${REFERENCE:-results/2026-11-26-h200-12f7b85-arch-tester-first-call/tester.json}
summary=()
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpu.txt"
# Which code the bundle holds: the tester's banner names the commit its build was configured at,
# which can be older than the sources it was built from; the newest suite tells more.
bundle_note="bundle: batchsolve_nonfinite_test $([[ -x $bundle/bin/batchsolve_nonfinite_test ]] && echo present || echo 'MISSING (built before 2261f54)')"
bundle_note+="; working tree here at $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
echo "$bundle_note"

if [[ " $steps " == *" tester "* ]]; then
  timeout -k 5 "$tester_s" "$bundle/run" tester --routine potrf,potrs,posv --precision s,d \
    --layout interleaved,chunked,column_major --n 8,32,128 --batch 16384 --distinct 2048 --ref cusolver \
    --repeat 10 --jobs 16 --json "$out/tester.json" > "$out/tester.log" 2>&1
  rc=$?
  tail -n 3 "$out/tester.log"
  if [[ -s $out/tester.json ]]; then
    python3 libsolver/tests/codegen/compare_tester.py "$out/tester.json" "$reference" --markdown "$out/tester-vs-reference.md" |
      tail -n 1 > "$out/tester-compare.txt"
    summary+=("tester (rc $rc): $(cat "$out/tester-compare.txt")")
  else
    summary+=("tester: no JSON (rc $rc; see tester.log)")
  fi
fi

if [[ " $steps " == *" suites "* ]]; then
  # One process per test (CUDA instances only), JOBS at a time, the non-finite suite first, then
  # the rest in list order; a test that would start after the budget is reported as not run.
  (
    suites=${SUITES:-batchsolve_nonfinite_test batchsolve_coop_gpu_test batchsolve_jit_gpu_test batchsolve_column_major_gpu_test}
    list=$out/suites.list; : > "$list"
    for t in $suites; do
      "$bundle/run" "$t" --gtest_list_tests 2>/dev/null |
        awk -v t="$t" '/^[^ ]/ { s = $1; cpu = /TypeParam = cpu_/ } /^  / && !cpu { print t, s $1 }' >> "$list"
    done
    if [[ -n ${SUITES_FILTER:-} ]]; then grep -E "$SUITES_FILTER" "$list" > "$list.f"; mv "$list.f" "$list"; fi
    if [[ -n ${SUITES_SKIP:-} ]]; then grep -vE "$SUITES_SKIP" "$list" > "$list.f"; mv "$list.f" "$list"; fi
    export bundle out deadline=$(( $(date +%s) + suites_s )) test_timeout=${TEST_TIMEOUT:-$suites_s}
    xargs -P "${JOBS:-8}" -L 1 bash -c 'log="$out/suite.$0.${1//\//_}.log"
      left=$(( deadline - $(date +%s) )); (( left > 5 )) || { echo "nr $0 $1"; exit 0; }
      timeout -k 5 "$(( left < test_timeout ? left : test_timeout ))" "$bundle/run" "$0" --gtest_filter="$1" > "$log" 2>&1
      echo "$? $0 $1"' < "$list" > "$out/suites.rc"
    {
      echo "=== suites: $(wc -l < "$list") tests: $(awk '$1 == 0' "$out/suites.rc" | wc -l) passed," \
           "$(awk '$1 == 124 || $1 == 137' "$out/suites.rc" | wc -l) timed out," \
           "$(awk '$1 == "nr"' "$out/suites.rc" | wc -l) not run (budget)," \
           "$(awk '$1 != 0 && $1 != 124 && $1 != 137 && $1 != "nr"' "$out/suites.rc" | wc -l) failed"
      awk '$1 == 0 { print "passed: " $2 " " $3 }' "$out/suites.rc"
      while read -r rc t name; do
        [[ $rc == 0 || $rc == nr ]] && continue
        echo "--- $t $name: rc=$rc"
        grep -E "FAILED|Failure|Which is|Expected|trace:|\.cpp:[0-9]+" "$out/suite.$t.${name//\//_}.log" | head -n 12
      done < "$out/suites.rc"
      grep -l "skipped: no GPU" "$out"/suite.*.log 2>/dev/null | sed 's/^/skipped (no GPU?): /'
    } > "$out/suites.log" 2>&1
    tar -C "$out" -czf "$out/suite-logs.tar.gz" suites.list suites.rc $(cd "$out" && ls suite.*.log 2>/dev/null) &&
      rm -f "$out"/suite.*.log "$out/suites.list"
  ) &
  suites_pid=$!
fi

if [[ " $steps " == *" sanitize "* ]]; then
  sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  export LD_LIBRARY_PATH="$bundle/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
  tester=$bundle/bin/tester
  case_args() {  # s128 | d64
    case $1 in
      s128) echo "--precision s --n 128" ;;
      d64) echo "--precision d --n 64" ;;
    esac
  }
  common=(--routine potrf,posv --layout column_major --uplo lower --batch 600 --distinct 600 --nrhs 1 --repeat 1
          --warmup 0 --check --backend cuda --jobs 4 --seed 22)
  # compile the kernels once, outside the sanitizer (the disk cache serves the sanitized runs), and
  # record which configurations the tables picked
  for c in s128 d64; do
    "$tester" "${common[@]}" $(case_args $c) --json "$out/sanitize-$c.json" > /dev/null 2>&1
  done
  python3 - "$out" <<'PY' | tee "$out/sanitize-configs.txt"
import json, sys
for c in ("s128", "d64"):
    try:
        d = json.load(open(f"{sys.argv[1]}/sanitize-{c}.json"))
    except Exception as e:
        print(c, "no JSON:", e); continue
    for r in d["rows"]:
        k = r.get("kernel", {}).get("config", {})
        print(r["routine"], r["precision"], r["n"], r["status"], "staged" if k.get("staged") else "not staged",
              f"nb {k.get('nb')} warps {k.get('warps_per_matrix')} matrices/block {k.get('matrices_per_block')}",
              "tensor cores" if k.get("tensor_cores") else "")
PY
  limit=$(( sanitize_s - 10 )); (( limit < 20 )) && limit=20
  sanitize_pids=()
  for tool in racecheck memcheck initcheck synccheck; do
    for c in s128 d64; do
      extra=()
      [[ $tool == memcheck ]] && extra=(--leak-check no)
      ( timeout -k 5 "$limit" "$sanitizer" --tool $tool "${extra[@]}" --print-limit 20 --error-exitcode 99 \
          "$tester" "${common[@]}" $(case_args $c) > "$out/sanitize-$tool-$c.log" 2>&1
        echo $? > "$out/sanitize-$tool-$c.rc" ) &
      sanitize_pids+=($!)
    done
  done
  wait "${sanitize_pids[@]}"
  sanitize_line=$(python3 - "$out" <<'PY'
import glob, re, sys
out = sys.argv[1]
parts = []
for log in sorted(glob.glob(f"{out}/sanitize-*-*.log")):
    name = log[len(out) + len("/sanitize-"):-len(".log")]
    text = open(log, errors="replace").read()
    rc = open(log[:-4] + ".rc").read().strip()
    m = re.search(r"RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)", text)
    e = re.search(r"ERROR SUMMARY: (\d+) error", text)
    verdict = (f"{m.group(1)} hazards" if m else f"{e.group(1)} errors" if e else "no summary")
    rows_failed = "FAILED" in text
    parts.append(f"{name}: {verdict}, rc {rc}" + (", tester rows FAILED" if rows_failed else ""))
print("; ".join(parts))
PY
)
  echo "$sanitize_line" > "$out/sanitize-summary.txt"
  summary+=("sanitize (batch 600): $sanitize_line")
  tar -C "$out" -czf "$out/sanitize-logs.tar.gz" $(cd "$out" && ls sanitize-*.log sanitize-*.rc sanitize-*.json) &&
    rm -f "$out"/sanitize-*.log "$out"/sanitize-*.rc "$out"/sanitize-s128.json "$out"/sanitize-d64.json
fi

if [[ -n ${suites_pid:-} ]]; then
  wait "$suites_pid"
  grep -vE "^passed: " "$out/suites.log" | head -n 30
  summary+=("suites: $(grep -E '^=== suites' "$out/suites.log" | sed 's/^=== suites: //')")
fi

# At most ~6 files come back from the GPU machine: the tester's JSON and comparison stay apart, the
# rest goes into one archive.
( cd "$out" && tar -czf logs.tar.gz $(ls gpu.txt tester.log tester-compare.txt sanitize-* suites.log suites.rc \
    suite-logs.tar.gz 2>/dev/null) && rm -f gpu.txt tester.log tester-compare.txt sanitize-* suites.log suites.rc \
    suite-logs.tar.gz )
echo "=== arch-gen summary ($(( $(date +%s) - t0 )) s, $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1))"
echo "$bundle_note"
for line in "${summary[@]}"; do echo "$line"; done
