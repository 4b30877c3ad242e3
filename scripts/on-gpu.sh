#!/usr/bin/env bash
# Runs on the GPU machine, in the repository root, with .gpu-bundle carried there. Writes logs and
# JSON under $OUT (the device tool brings them back); commit what matters under results/.
#   scripts/on-gpu.sh tests [gtest-filter]      every GoogleTest executable of the bundle
#   scripts/on-gpu.sh gpu-tests [gtest args]    the suites that use the GPU, one process per test, in parallel
#   scripts/on-gpu.sh tester ARGS...            the tester with ARGS (JSON to $OUT/tester.json)
#   scripts/on-gpu.sh baseline                  the cuSOLVER-vs-LAPACK baseline table (issue 2)
#   scripts/on-gpu.sh autotune ARGS...          the autotuner (tools/autotune/)
#   scripts/on-gpu.sh sweep WAIT_S              the full s and d sweep (libsolver/tuning/README.md) in the
#                                               background: starts it (resuming .gpu-bundle/sweep/progress.jsonl
#                                               when carried) or waits on it, at most WAIT_S seconds
#   scripts/on-gpu.sh compare TABLE ARGS...     the tester twice with the same seed: the compiled-in tables,
#                                               then TABLE (BATCHSOLVE_TUNING_FILE); tools/autotune/compare_tester_runs.py
#   scripts/on-gpu.sh profile REGEX ARGS...     Nsight Compute (full set, source lines) of the first
#                                               kernel matching REGEX in `tester ARGS` -> $OUT/ncu.tar.gz
# Several steps can be chained: scripts/on-gpu.sh tests -- baseline
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/out}; mkdir -p "$out"
# (BATCHSOLVE_BUNDLE_DIR and BATCHSOLVE_SWEEP_DIR: another place, for scripts/test_on_gpu.sh)
bundle=${BATCHSOLVE_BUNDLE_DIR:-/tmp/bundle}
[[ -x $bundle/run ]] || tar -xJf .gpu-bundle/bundle.tar.xz -C /tmp || exit 1
# NVRTC's compiled kernels persist between calls of the device tool (each starts a bare machine)
# when the previous call's $OUT/jit-cache.tar.xz is carried back as .jit-cache/jit-cache.tar.xz.
export BATCHSOLVE_CACHE_DIR=/tmp/batchsolve-cache
mkdir -p "$BATCHSOLVE_CACHE_DIR"
# The archive comes back in 15 MB parts (the device tool returns files of at most 16 MiB).
if compgen -G ".jit-cache/jit-cache.tar.xz.part-*" >/dev/null; then
  cat .jit-cache/jit-cache.tar.xz.part-* | tar -xJf - -C "$BATCHSOLVE_CACHE_DIR"
fi
# Only on request (SAVE_JIT_CACHE=1): a full sweep's cache (~90 MB) no longer fits what a call may
# carry next to the bundle, and its parts would crowd out the files a call returns.
save_cache() {
  tar -C "$BATCHSOLVE_CACHE_DIR" -cf - . | xz -T0 -6 | split -b 15M -d - "$out/jit-cache.tar.xz.part-"
}
[[ ${SAVE_JIT_CACHE:-0} == 1 ]] && trap save_cache EXIT
export BATCHSOLVE_COMMIT=${BATCHSOLVE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
# The tester's host side allocates and fills batches of hundreds of MB per row; glibc's malloc then
# maps them with transparent huge pages (glibc >= 2.35; ignored before): a d potrf row at n = 128,
# batch 16384, with the LAPACK reference and the check took 20.5 s instead of 24.0 s on a 2-core host.
export GLIBC_TUNABLES=${GLIBC_TUNABLES:-glibc.malloc.hugetlb=1}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee "$out/gpu.txt"

status=0
while (($#)); do
  step=$1; shift
  args=(); while (($#)) && [[ $1 != -- ]]; do args+=("$1"); shift; done
  (($#)) && shift  # the --
  case $step in
    gpu-tests)
      # The suites that exercise the GPU (the no-GPU codegen/emulation suites already ran in CI), one
      # process per test (from --gtest_list_tests), JOBS at a time (default: the host's cores): most
      # of a first run is NVRTC compiling each test's kernels (the heavy tests compile theirs ahead on
      # several threads, test_support.hpp's compile_ahead); the kernels tests share meet in the disk
      # cache. The CPU-backend instances of the typed suites are left out: CI runs them, and here
      # they only take cores (posv's every-size test on the CPU took 314-326 s among the GPU tests).
      # The longest tests (every size, every precision) start first. Each test is bounded by
      # TEST_TIMEOUT seconds and the whole step by GPU_TESTS_BUDGET_S (default 480, inside a call's
      # 600 s): a test that would start later is reported as not run, and the logs always come back.
      # SUITES overrides the list of suites; extra arguments (e.g. --gtest_filter=...) select tests.
      read -r -a suites <<< "${SUITES:-batchsolve_column_major_gpu_test batchsolve_jit_gpu_test batchsolve_coop_gpu_test batchsolve_cuda_backend_smoke_test batchsolve_potrf_test batchsolve_potrs_test batchsolve_posv_test batchsolve_layout_test}"
      list=$out/gpu-tests.list; : > "$list"
      for t in "${suites[@]}"; do
        # "Posv/0.  # TypeParam = cpu_s" heads a typed suite's tests
        "$bundle/run" "$t" --gtest_list_tests "${args[@]}" |
          awk -v t="$t" '/^[^ ]/ { s = $1; cpu = /TypeParam = cpu_/ } /^  / && !cpu { print t, s $1 }' >> "$list"
      done
      { grep -E "Every|Precisions" "$list"; grep -vE "Every|Precisions" "$list"; } > "$list.sorted"; mv "$list.sorted" "$list"
      export bundle out
      export TEST_TIMEOUT=${TEST_TIMEOUT:-300}
      export DEADLINE=$(( $(date +%s) + ${GPU_TESTS_BUDGET_S:-480} ))
      # prints "rc suite test" per test ("nr": not run, the step's budget spent); the log of each is
      # $out/<suite>.<test>.log
      xargs -P "${JOBS:-$(nproc)}" -L 1 bash -c 'log="$out/$0.${1//\//_}.log"
        left=$(( DEADLINE - $(date +%s) ))
        (( left > 0 )) || { echo "nr $0 $1"; exit 0; }
        timeout -k 10 "$(( left < TEST_TIMEOUT ? left : TEST_TIMEOUT ))" stdbuf -oL -eL "$bundle/run" "$0" --gtest_filter="$1" > "$log" 2>&1
        echo "$? $0 $1"' < "$list" > "$out/gpu-tests.rc"
      echo "=== gpu-tests: $(wc -l < "$list") tests: $(awk '$1 == 0' "$out/gpu-tests.rc" | wc -l) passed," \
           "$(awk '$1 == 124' "$out/gpu-tests.rc" | wc -l) timed out (TEST_TIMEOUT $TEST_TIMEOUT s or the step's budget)," \
           "$(awk '$1 == "nr"' "$out/gpu-tests.rc" | wc -l) not run (GPU_TESTS_BUDGET_S)," \
           "$(awk '$1 != 0 && $1 != 124 && $1 != "nr"' "$out/gpu-tests.rc" | wc -l) failed"
      while read -r rc t name; do
        [[ $rc == 0 ]] && continue
        status=1
        echo "--- $t $name: rc=$rc"
        [[ $rc == nr ]] && continue
        grep -E "FAILED|Failure|Which is|Expected|trace:|\.cpp:[0-9]+" "$out/$t.${name//\//_}.log" | head -n 20
      done < "$out/gpu-tests.rc"
      # skipped tests say so in their logs ("skipped: ..."): on a GPU machine none should
      grep -l "^\[  SKIPPED \]" "$out"/batchsolve_*.log 2>/dev/null | sed 's/^/skipped: /'
      tar -C "$out" -czf "$out/gpu-test-logs.tar.gz" gpu-tests.list gpu-tests.rc $(cd "$out" && ls batchsolve_*.log) &&
        rm -f "$out"/batchsolve_*.log "$out/gpu-tests.list" "$out/gpu-tests.rc" ;;
    tests)
      "$bundle/run-tests" "${args[@]}" 2>&1 | tee "$out/tests.log"; ((status |= PIPESTATUS[0])) ;;
    tester)
      "$bundle/run" tester "${args[@]}" --json "$out/tester.json" 2>&1 | tee "$out/tester.log"; ((status |= PIPESTATUS[0])) ;;
    autotune)
      "$bundle/run" autotune "${args[@]}" 2>&1 | tee "$out/autotune.log"; ((status |= PIPESTATUS[0])) ;;
    sweep)
      # The full s and d sweep (libsolver/tuning/README.md) as one process that outlives the call: a
      # call runs at most 10 minutes, and a sweep cut into parts idles its compile threads at every
      # part's end. The first call on a machine starts the tuner in a session of its own (setsid; it
      # then runs until the machine goes back), resuming .gpu-bundle/sweep/progress.jsonl when
      # carried; every call, the first included, waits up to WAIT_S seconds for it and brings back
      # its progress file, console log and candidate log (compressed) as written so far. Call
      # again within the machine's idle time to wait on; on a fresh machine, copy the last
      # $OUT/progress.jsonl to .gpu-bundle/sweep/ first and it resumes there. The disk cache is off,
      # so that the sweep compiles what a sweep compiles. Set BATCHSOLVE_COMMIT to the bundle's
      # commit: the machine's copy of the repository has answered another HEAD before.
      wait_s=${args[0]:?sweep needs WAIT_S}
      run_dir=${BATCHSOLVE_SWEEP_DIR:-/tmp/sweep}
      if [[ ! -f $run_dir/pid ]]; then
        mkdir -p "$run_dir"
        [[ -f .gpu-bundle/sweep/progress.jsonl ]] && cp .gpu-bundle/sweep/progress.jsonl "$run_dir/progress.jsonl"
        start=$(date -u +%Y%m%dT%H%M%SZ); echo "$start" > "$run_dir/start"
        # (bash -c keeps the tuner's exit status in $run_dir/rc)
        BATCHSOLVE_CACHE_DIR= setsid bash -c '"$@"; echo $? > "$0"' "$run_dir/rc" "$bundle/run" autotune \
          --routine potrf,posv,potrs --precision s,d --n 1:128 --layout interleaved,chunked,column_major --batch 16384 \
          --output "$run_dir/table.json" --log "$run_dir/candidates-$start.jsonl" --resume "$run_dir/progress.jsonl" \
          --jobs "$(nproc)" --repeat 5 --commit "$BATCHSOLVE_COMMIT" > "$run_dir/autotune-$start.log" 2>&1 < /dev/null &
        echo $! > "$run_dir/pid"
        echo "sweep: started $start (pid $(cat "$run_dir/pid"))"
      fi
      start=$(cat "$run_dir/start"); pid=$(cat "$run_dir/pid")
      for ((waited = 0; waited < wait_s; waited += 5)); do kill -0 "$pid" 2>/dev/null || break; sleep 5; done
      # every call brings back what the sweep wrote so far (a machine given back keeps nothing)
      cp "$run_dir/progress.jsonl" "$run_dir/autotune-$start.log" "$out/" 2>/dev/null
      nice -n 19 xz -T2 -c "$run_dir/candidates-$start.jsonl" > "$out/candidates-$start.jsonl.xz" 2>/dev/null
      if kill -0 "$pid" 2>/dev/null; then
        echo "sweep: still running after this call's $wait_s s; $(wc -l < "$run_dir/progress.jsonl" 2>/dev/null || echo 0) cases in the progress file"
      else
        rc=$(cat "$run_dir/rc" 2>/dev/null || echo "unknown")
        echo "sweep: ended, exit status $rc (a new sweep on this machine: rm -rf $run_dir first)"
        grep -E "^autotune:" "$run_dir/autotune-$start.log" | head -n 3
        [[ $rc == 0 ]] || status=1
      fi ;;
    compare)
      # The same binary and seed with the tables compiled in, then with TABLE: only a comparison in one
      # call says whether a new table is faster (libsolver/tuning/README.md, "Re-tuning").
      table=$(realpath "${args[0]:?compare needs a table}"); targs=("${args[@]:1}")
      "$bundle/run" tester --seed 42 "${targs[@]}" --json "$out/compare-committed.json" > "$out/compare-committed.log" 2>&1
      ((status |= $?))
      BATCHSOLVE_TUNING_FILE=$table "$bundle/run" tester --seed 42 "${targs[@]}" --json "$out/compare-new.json" \
        > "$out/compare-new.log" 2>&1
      ((status |= $?))
      tail -n 1 "$out/compare-committed.log" "$out/compare-new.log" ;;
    profile)
      # The generated sources go to a directory and are compiled with -lineinfo (BATCHSOLVE_JIT_SOURCE_DIR,
      # libsolver/README.md), so the report's SourceCounters name generated lines. Clocks stay as they
      # are (--clock-control none), as the device notes ask.
      regex=${args[0]:?profile needs a kernel-name regex}; targs=("${args[@]:1}")
      src=/tmp/jit-source; mkdir -p "$src"
      BATCHSOLVE_JIT_SOURCE_DIR=$src ncu --clock-control none --set full --import-source yes \
        --kernel-name "regex:$regex" --launch-skip 1 --launch-count 1 --print-summary none \
        --export "$out/profile" "$bundle/run" tester --repeat 1 --warmup 1 "${targs[@]}" > "$out/profile.log" 2>&1
      ((status |= $?))
      # the details text, and the per-line source view (generated CUDA lines with their SASS) as CSV;
      # a reader without ncu gets the text, one with ncu the whole report
      ncu --import "$out/profile.ncu-rep" --page details > "$out/profile-details.txt" 2>&1
      ncu --import "$out/profile.ncu-rep" --page source --csv --print-source cuda,sass > "$out/profile-source.csv" 2>&1
      tar -C "$out" -czf "$out/ncu.tar.gz" profile.log profile-details.txt profile-source.csv profile.ncu-rep
      rm -f "$out/profile.log" "$out/profile-details.txt" "$out/profile-source.csv" "$out/profile.ncu-rep"
      grep -hE "Duration|Executed Instructions  " <(tar -xzOf "$out/ncu.tar.gz" profile-details.txt) ;;
    baseline)
      "$bundle/run" tester --routine potrf --precision s,d --n 4:128:4 --batch 16384 --layout column_major \
        --backend cuda --check --ref cusolver,lapack --json "$out/baseline.json" 2>&1 | tee "$out/baseline.log"
      ((status |= PIPESTATUS[0])) ;;
    *) echo "on-gpu: unknown step '$step'" >&2; exit 2 ;;
  esac
done
exit $status
