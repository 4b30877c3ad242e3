#!/usr/bin/env bash
# Runs one libFuzzer target for a bounded time and sorts what it found by whose code failed.
#
#   scripts/sanitize-fuzz.sh FUZZER SEED_CORPUS WORK_DIR SECONDS
#   (SECONDS = 0: no fuzzing, only the triage of the failing inputs already in WORK_DIR)
#
# The fuzzer runs in libFuzzer's fork mode, which survives crashes, timeouts and out-of-memory inputs
# and goes on fuzzing; new inputs go to WORK_DIR/corpus (the committed SEED_CORPUS is only read),
# failing inputs to WORK_DIR/artifacts. Each failing input is then replayed alone and attributed to
# the innermost stack frame outside the sanitizer runtime, libc and the C++ standard library:
#   ours    - a frame of our code (batchsolve, the applications): a bug to fix, exit status 1;
#   foreign - a frame inside a system shared library (/lib, /usr/lib): e.g. HDF5 1.10 crashes, loops
#             or allocates without bound on some crafted files; counted and listed, not failed here:
#             the programs keep their users away from it (h5::probe_in_child, docs/input-checks.md).
# The last lines are a one-line summary: execs, inputs in the corpus, failures by owner.
set -uo pipefail
if (($# != 4)); then
  echo "usage: $0 FUZZER SEED_CORPUS WORK_DIR SECONDS" >&2
  exit 2
fi
fuzzer=$1 seeds=$2 work=$3 seconds=$4
[[ -x $fuzzer ]] || { echo "sanitize-fuzz: $fuzzer is not an executable" >&2; exit 2; }
[[ -d $seeds ]] || { echo "sanitize-fuzz: seed corpus $seeds is not a folder" >&2; exit 2; }
name=$(basename "$fuzzer")
mkdir -p "$work/corpus" "$work/artifacts" "$work/replays"
# Leaks: HDF5 keeps free lists for the life of the process (reported on every exit); our own leaks are
# caught by the sanitizer build's unit tests instead.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1:allocator_may_return_null=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
per_input_timeout=${SANITIZE_FUZZ_TIMEOUT:-10}  # seconds one input may take before it counts as a hang

log=$work/fuzz.log
if ((seconds == 0)); then  # triage only: the artifacts and log of an earlier run in WORK_DIR
  fuzz_status=0
else
"$fuzzer" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 -max_total_time="$seconds" \
  -timeout=$per_input_timeout -rss_limit_mb=2048 -malloc_limit_mb=2048 -artifact_prefix="$work/artifacts/" \
  "$work/corpus" "$seeds" >"$log" 2>&1
fuzz_status=$?
fi
execs=$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#')
# SANITIZE_FUZZ_TRIAGE=0: fuzz only (a campaign of many stretches triages once, at its end).
if [[ ${SANITIZE_FUZZ_TRIAGE:-1} == 0 ]]; then
  echo "fuzz $name: ${seconds} s, ${execs:-0} execs, triage deferred; libFuzzer exit ${fuzz_status}"
  if ((fuzz_status != 0)) && ! grep -q 'INFO: exiting\|INFO: fuzzed for' "$log"; then
    echo "sanitize-fuzz: libFuzzer itself failed (see $log)"; exit 1
  fi
  exit 0
fi
corpus_size=$(find "$work/corpus" -type f | wc -l)

# Owner of one failing input: replay it and read the innermost frame that is not the sanitizer's, the
# fuzzer driver's, libc's or the C++ standard library's (inlined std:: code is attributed to its caller).
# A frame in a shared library of the system (/lib, /usr/lib: HDF5, gmsh, libtiff, ...) is "foreign";
# any other frame is ours.
owner_of() {
  local input=$1 out=$work/replays/$(basename "$1").txt
  timeout $((per_input_timeout * 3)) "$fuzzer" -timeout=$per_input_timeout -rss_limit_mb=2048 \
    -malloc_limit_mb=2048 "$input" >"$out" 2>&1
  # Frames of the fuzzer binary without a source line are the sanitizer's interceptors (strdup, memcpy).
  local frame
  frame=$(grep -E '^ +#[0-9]+ 0x' "$out" | grep -vE "/$name\+0x" |
    grep -vE '__interceptor_|__asan|__sanitizer|__ubsan|in (malloc|calloc|realloc|free|memcpy|memmove|memset|operator new)\b|fuzzer::|libc\.so|libstdc\+\+|libc\+\+| (nptl|signal|stdlib|assert|string|sysdeps)/|LLVMFuzzerTestOneInput|in main ' |
    grep -vE ' in (std::|__gnu_cxx::)|/include/c\+\+/' |
    head -1)
  if [[ -z $frame ]]; then
    if grep -q 'Executed .* in' "$out"; then echo "none"; else echo "ours"; fi  # no stack: ours to look at
  elif [[ $frame =~ \((/usr)?/lib/[^+\)]*\+0x ]]; then
    local lib
    lib=$(grep -oE '\((/usr)?/lib/[^+)]*' <<<"$frame" | head -1 | sed 's|.*/||; s|^(||')
    echo "foreign $lib $(sed -E 's/^ +#[0-9]+ 0x[0-9a-f]+ (in )?//; s/ \(.*//' <<<"$frame")"
  else
    echo "ours $(sed -E 's/^ +#[0-9]+ 0x[0-9a-f]+ //' <<<"$frame")"
  fi
}

ours=0 foreign=0 gone=0 skipped=0
max_replays=${SANITIZE_FUZZ_MAX_REPLAYS:-40}  # bounds the triage time (a hang costs its timeout)
# (inputs beyond it are counted as "not replayed": the long runs replay more)
declare -A foreign_stacks=()
# Crashes first (quick to replay), then out-of-memory inputs, then hangs (each costs its timeout).
for input in "$work"/artifacts/crash-* "$work"/artifacts/oom-* "$work"/artifacts/leak-* "$work"/artifacts/timeout-* \
             "$work"/artifacts/slow-unit-*; do
  [[ -f $input ]] || continue
  if ((ours + foreign + gone >= max_replays)); then ((skipped++)); continue; fi
  kind=$(basename "$input" | cut -d- -f1)
  read -r owner where < <(owner_of "$input")
  case $owner in
    foreign) ((foreign++)); foreign_stacks["$kind in $where"]=1 ;;
    none) ((gone++)) ;;  # did not fail again alone (a slow input under load): listed, not counted
    *) ((ours++)); echo "sanitize-fuzz: OURS: $kind $(basename "$input"): ${where:-no stack} (replay: $work/replays/$(basename "$input").txt)" ;;
  esac
done
for s in "${!foreign_stacks[@]}"; do echo "sanitize-fuzz: system library: $s"; done | sort
echo "fuzz $name: ${seconds} s, ${execs:-0} execs, corpus ${corpus_size} new inputs, failures: ours ${ours}, inside system libraries ${foreign} (${#foreign_stacks[@]} distinct), not reproduced alone ${gone}, not replayed ${skipped}; libFuzzer exit ${fuzz_status}"
if ((fuzz_status != 0)) && ! grep -q 'INFO: exiting\|INFO: fuzzed for' "$log"; then
  echo "sanitize-fuzz: libFuzzer itself failed (see $log)"; exit 1
fi
((ours == 0))
