# The common start of the small-Cholesky GPU topic scripts (small-cyclic.sh, small-cyclic-confirm.sh,
# small-lean.sh), sourced from the repository root:
#   gpu_prelude NAME DEFAULT_BUDGET_S
# sets out=$OUT/NAME (created), budget (TOPIC_BUDGET_S, else DEFAULT_BUDGET_S), start, left() (seconds of
# the budget left), run (the bundle's run wrapper, BUNDLE_RUN), carry (.carry/small-lean); writes gpu.txt,
# commit.txt and date.txt into $out; exports BATCHSOLVE_CACHE_DIR (created).
#   find_cusolverdx
# exports BATCHSOLVE_CUSOLVERDX as the first executable of: itself, $carry/bench_cusolverdx, the bundle's
# bin/bench_cusolverdx, ../shared/tools/peers/cusolverdx/bench_cusolverdx; unset or empty stays so.
gpu_prelude() {
  out=${OUT:-/tmp/out}/$1; mkdir -p "$out"
  budget=${TOPIC_BUDGET_S:-$2}; start=$SECONDS
  left() { echo $((budget - (SECONDS - start))); }
  run=${BUNDLE_RUN:-/tmp/bundle/run}
  carry=.carry/small-lean
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > "$out/gpu.txt" 2>&1
  echo "${BATCHSOLVE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}" > "$out/commit.txt"
  date -u +%FT%TZ > "$out/date.txt"
  export BATCHSOLVE_CACHE_DIR=${BATCHSOLVE_CACHE_DIR:-/tmp/batchsolve-cache}; mkdir -p "$BATCHSOLVE_CACHE_DIR"
}

find_cusolverdx() {
  local p
  for p in "${BATCHSOLVE_CUSOLVERDX:-}" "$PWD/$carry/bench_cusolverdx" "$(dirname "$run")/bin/bench_cusolverdx" \
           "$PWD/../shared/tools/peers/cusolverdx/bench_cusolverdx"; do
    [[ -n $p && -x $p ]] && { export BATCHSOLVE_CUSOLVERDX=$p; return 0; }
  done
  return 0
}
