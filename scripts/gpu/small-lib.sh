# Helpers of the small-Cholesky GPU scripts (small.sh, small-proto.sh, small-lean.sh), sourced after they
# set out (results folder), run (the bundle's run wrapper) and left() (seconds of the budget left):
#   tester_step NAME LIMIT TABLE(or -) TESTER-ARGS...
# runs the tester under min(LIMIT, what is left) seconds, with BATCHSOLVE_TUNING_FILE=TABLE unless TABLE
# is -, JSON to $out/NAME.json and its console to $out/NAME.log; a step with less than 3 s left is
# skipped (named in $out/skipped.txt). A script that defines want() runs only the steps it wants.
tester_step() {
  local name=$1 limit=$2 table=$3; shift 3
  if declare -F want > /dev/null; then want "$name" || return 0; fi
  local l; l=$(left)
  (( l < 3 )) && { echo "$name: skipped (budget)" | tee -a "$out/skipped.txt"; return 0; }
  (( limit > l )) && limit=$l
  local t0=$SECONDS
  if [[ $table == - ]]; then
    timeout -k 2 "$limit" "$run" tester "$@" --json "$out/$name.json" > "$out/$name.log" 2>&1
  else
    BATCHSOLVE_TUNING_FILE=$table timeout -k 2 "$limit" "$run" tester "$@" --json "$out/$name.json" > "$out/$name.log" 2>&1
  fi
  echo "$name: rc $? in $((SECONDS - t0)) s ($(grep -E '^tester:' "$out/$name.log" || tail -n 1 "$out/$name.log"))"
}
