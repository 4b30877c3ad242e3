#!/usr/bin/env bash
# First-call cost of the batched Cholesky (issue 21), run on the GPU machine from the repository root
# with the bundle at /tmp/bundle: for s and d, n = 8, 32, 128, column-major and interleaved, potrf at
# batch 16384, each in fresh processes: batchsolve with an empty kernel cache (cold: generation +
# NVRTC), batchsolve again with the cache that run populated (warm: a second program's first call),
# and cuSOLVER's potrfBatched (column-major; its first process and a second one). Context creation
# is reported apart. Writes $OUT/arch-lib/first_call.jsonl and prints a table.
#   libsolver/scripts/first-call.sh [ROUTINE]        (default potrf)
set -uo pipefail
routine=${1:-potrf}
run=${BUNDLE_RUN:-/tmp/bundle/run}
out=${OUT:-/tmp/out}/arch-lib; mkdir -p "$out"
jsonl=$out/first_call.jsonl; : > "$jsonl"
cache=$(mktemp -d /tmp/first-call-cache.XXXX)
export BATCHSOLVE_CACHE_DIR=$cache
one() {  # label, arguments...: one fresh process, its JSON line tagged
  local label=$1; shift
  local line
  line=$(timeout 120 "$run" batchsolve_first_call --routine "$routine" --batch 16384 "$@" 2>&1 | tail -n 1)
  case $line in
    \{*) echo "${line%\}},\"run\":\"$label\"}" >> "$jsonl" ;;
    *) echo "FAILED ($label $*): $line" ;;
  esac
}
for p in s d; do
  for layout in column_major interleaved; do
    for n in 8 32 128; do
      rm -rf "${cache:?}"/*                      # empty kernel cache
      one cold --precision $p --layout $layout --n $n
      one warm --precision $p --layout $layout --n $n   # the cache the cold run wrote
    done
  done
  for n in 8 32 128; do
    one vendor-first --precision $p --layout column_major --n $n --vendor
    one vendor-second --precision $p --layout column_major --n $n --vendor
  done
done
rm -rf "$cache"
python3 - "$jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
if not rows:
    print("first-call: no rows"); sys.exit(1)
print(f"first-call cost on {rows[0]['device']}, {rows[0]['routine']}, batch {rows[0]['batch']} (seconds; Context creation apart)")
print(f"{'prec':4} {'layout':12} {'n':>4} {'cold':>8} {'warm':>8} {'cuSOLVER 1st':>12} {'cuSOLVER 2nd':>12} {'context':>8} {'steady':>9}")
by = {(r['precision'], r['layout'], r['n'], r['run']): r for r in rows}
for p in 'sd':
    for layout in ('column_major', 'interleaved'):
        for n in (8, 32, 128):
            g = lambda run, k='first_call_s': by.get((p, layout if not run.startswith('vendor') else 'column_major', n, run), {}).get(k)
            f = lambda v, w=8: f"{v:{w}.3f}" if v is not None else f"{'-':>{w}}"
            print(f"{p:4} {layout:12} {n:4} {f(g('cold'))} {f(g('warm'))} {f(g('vendor-first'),12)} {f(g('vendor-second'),12)}"
                  f" {f(g('cold','context_s'))} {f(g('warm','second_call_s'),9)}")
warm = [r['first_call_s'] for r in rows if r['run'] == 'warm']
cold = [r['first_call_s'] for r in rows if r['run'] == 'cold']
vend = [r['first_call_s'] for r in rows if r['run'] == 'vendor-first']
print(f"summary: cold max {max(cold):.3f} s, warm max {max(warm):.3f} s, cuSOLVER first call max {max(vend):.3f} s")
PY
