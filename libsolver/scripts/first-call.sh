#!/usr/bin/env bash
# First-call cost of the batched Cholesky (issue 21), on the GPU machine from the repository root: for
# s and d, n = 8, 32, 128, column-major and interleaved, the routine at batch 16384, each in a fresh
# process of PROGRAM (batchsolve_first_call): with an empty kernel cache (cold: generation + NVRTC),
# again with the cache that run filled (cached: a second program's first call), and cuSOLVER's first
# call beside them. Context creation is reported apart. Prints a compact table and writes
# $OUT/<label>/first_call.jsonl.
#   libsolver/scripts/first-call.sh [--label NAME] [--routine R] [--no-vendor] [PROGRAM]
# PROGRAM: the batchsolve_first_call to measure (default: the bundle's, through /tmp/bundle/run). A path
# to an executable runs with its own folder first on LD_LIBRARY_PATH, so that an older build kept with
# its libbatchsolve (e.g. .fc-base/) measures itself: run the script once per build, same machine.
set -uo pipefail
label=first-call routine=potrf vendor=1
program=()
while (($#)); do
  case $1 in
    --label) label=$2; shift 2 ;;
    --routine) routine=$2; shift 2 ;;
    --no-vendor) vendor=0; shift ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) program=("$1"); shift ;;
  esac
done
if ((${#program[@]} == 0)); then
  program=("${BUNDLE_RUN:-/tmp/bundle/run}" batchsolve_first_call)
elif [[ -x ${program[0]} && ${program[0]} == */* ]]; then
  export LD_LIBRARY_PATH="$(cd "$(dirname "${program[0]}")" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
out=${OUT:-/tmp/out}/$label; mkdir -p "$out"
jsonl=$out/first_call.jsonl; : > "$jsonl"
cache=$(mktemp -d /tmp/first-call-cache.XXXX)
export BATCHSOLVE_CACHE_DIR=$cache
one() {  # run label, arguments...: one fresh process, its JSON line tagged
  local run=$1; shift
  local line
  line=$(timeout 120 "${program[@]}" --routine "$routine" --batch 16384 "$@" 2>&1 | tail -n 1)
  case $line in
    \{*) echo "${line%\}},\"run\":\"$run\"}" >> "$jsonl" ;;
    *) echo "FAILED ($run $*): $line" ;;
  esac
}
for p in s d; do
  for layout in column_major interleaved; do
    for n in 8 32 128; do
      rm -rf "${cache:?}"/*                      # empty kernel cache
      one cold --precision $p --layout $layout --n $n
      one cached --precision $p --layout $layout --n $n   # the cache the cold run wrote
    done
  done
  if ((vendor)); then
    for n in 8 32 128; do one cusolver --precision $p --layout column_major --n $n --vendor; done
  fi
done
rm -rf "$cache"
python3 - "$jsonl" "$label" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
if not rows:
    print("first-call: no rows"); sys.exit(1)
print(f"first-call cost [{sys.argv[2]}] on {rows[0]['device']}, {rows[0]['routine']}, batch {rows[0]['batch']} (seconds)")
print(f"{'case':22} {'context':>8} {'cold':>8} {'cached':>8} {'cusolver':>9} {'steady':>9}")
by = {(r['precision'], r['layout'], r['n'], r['run']): r for r in rows}
f = lambda v, w=8: f"{v:{w}.3f}" if v is not None else f"{'-':>{w}}"
for p in 'sd':
    for layout in ('column_major', 'interleaved'):
        for n in (8, 32, 128):
            g = lambda run, k='first_call_s', l=layout: by.get((p, l, n, run), {}).get(k)
            print(f"{p + ' ' + layout + ' n=' + str(n):22} {f(g('cold', 'context_s'))} {f(g('cold'))} {f(g('cached'))}"
                  f" {f(g('cusolver', l='column_major'), 9)} {f(g('cached', 'second_call_s'), 9)}")
pick = lambda run: [r['first_call_s'] for r in rows if r['run'] == run]
cold, cached, vend = pick('cold'), pick('cached'), pick('cusolver')
ctx = [r['context_s'] for r in rows]
m = lambda v: f"{max(v):.3f}" if v else "-"
print(f"summary [{sys.argv[2]}]: cold max {m(cold)} s, cached max {m(cached)} s, cuSOLVER first call max {m(vend)} s,"
      f" context max {m(ctx)} s")
PY
