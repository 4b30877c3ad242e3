# Helpers of the small-Cholesky GPU scripts (small.sh, small-lean.sh in its modes), sourced after they
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

# small_tables DIR: the candidate tables of small-lean.sh (validation/cusolverdx/fused_table.py), written
# once here for the script and its prebuild (small-lean-prebuild.sh) alike:
#   rows.json, rows-lean.json (s d c z), rows-lean-cap.json (SL_CAPS)       one row per lane, n = 4..32
#   cap-d32-80.json, cap-d32-64.json     the lean rows kernel at d n = 32 capped at 80 / 64 registers
#   shape-RAxTC.json (1x1 1x2 1x4 2x2)   the register kernels with that tile at n = 24, 32, 48, 64
small_tables() {
  local dir=$1 py=validation/cusolverdx/fused_table.py sh
  mkdir -p "$dir"
  python3 $py --design rows --n 4:32 --output "$dir/rows.json"
  python3 $py --design rows --n 4:32 --precision s,d,c,z --lean --output "$dir/rows-lean.json"
  python3 $py --design rows --n 4:32 --lean --max-registers "${SL_CAPS:-s8=32,s16=48,s32=56,d16=72}" --output "$dir/rows-lean-cap.json"
  for sh in 80 64; do
    python3 $py --design rows --n 32 --precision d --routine potrf --lean --max-registers d32=$sh --output "$dir/cap-d32-$sh.json"
  done
  for sh in 1x1 1x2 1x4 2x2; do
    python3 $py --design shape --shape $sh --n 24,32,48,64 --output "$dir/shape-$sh.json"
  done
}
