# The candidate tables of small-m2.sh and its prebuild (small-m2-prebuild.sh), written once here for both
# (validation/cusolverdx/fused_table.py --design shape, chained one order at a time onto
# libsolver/tuning/sm90.json; every square-grid entry with config.lean_addressing, the lean step loop,
# and config.compile_time_ld, lda = n in the text):
#   lean.json     LEAN_SPECS: one matrix per 64-thread block (the m1 form) on 8 x 8 threads at n = 48..128,
#                 on 4 x 4 threads (warp-synchronous steps, four matrices per block) at potrf n = 12..32;
#                 posv s d n = 48, 64 on 8 x 8 threads (the factor's loop, then the solve from shared memory)
#   lean-u.json   the same 8 x 8 entries at n = 48, 64 with the steps fully unrolled (config.full_unroll)
#   lean16.json   n = 64, 80, 128 on 16 x 16 threads (no rows_per_thread gives 16 at n = 100), one matrix per 256-thread block: a quarter of the 8 x 8
#                 share per thread (s n = 128: 36 elements instead of 136), so more blocks resident per SM
#   lean128.json  n = 48..128 on 8 x 8 threads, two matrices per 128-thread block
# N:SHAPE/TPB/LOOKING/NB/ROUTINES[/UNROLL] each (UNROLL on|off; default: fused_table.py's n <= 32).
LEAN_SPECS=${LEAN_SPECS:-"12:3x4/64/left/8/potrf 16:4x4/64/left/8/potrf 24:6x4/64/left/8/potrf 32:8x4/64/left/8/potrf 48:6x8/64/right/8 64:8x8/64/right/8 80:10x8/64/right/8/potrf 100:13x8/64/right/8/potrf 128:16x8/64/right/8/potrf"}
LEAN_U_SPECS=${LEAN_U_SPECS:-"48:6x8/64/right/8/potrf,posv/on 64:8x8/64/right/8/potrf,posv/on"}
LEAN16_SPECS=${LEAN16_SPECS:-"64:4x16/256/right/8 80:5x16/256/right/8 128:8x16/256/right/8"}
LEAN128_SPECS=${LEAN128_SPECS:-"48:6x8/128/right/8 64:8x8/128/right/8 80:10x8/128/right/8/potrf 100:13x8/128/right/8/potrf 128:16x8/128/right/8/potrf"}
m2_chain() {  # m2_chain DIR OUT BASE_TABLE N:SHAPE/TPB/LOOKING/NB[/ROUTINES[/UNROLL]] ...
  local dir=$1 dest=$2 prev=$3 i=0 spec shape tpb look nb rts unroll; shift 3
  for spec in "$@"; do
    IFS=/ read -r shape tpb look nb rts unroll <<< "${spec#*:}"
    python3 validation/cusolverdx/fused_table.py --committed "$prev" --design shape --shape "$shape" --n "${spec%%:*}" \
      --routine "${rts:-potrf,posv}" --precision s,d --threads-per-block "${tpb:-128}" --looking "${look:-right}" \
      --nb "${nb:--1}" --compile-time-ld --lean ${unroll:+--full-unroll "$unroll"} --output "$dir/$dest.$i.json" || return 1
    prev=$dir/$dest.$i.json; i=$((i + 1))
  done
  cp "$prev" "$dir/$dest.json"
  rm -f "$dir/$dest".[0-9]*.json
}
m2_tables() {  # m2_tables DIR
  local dir=$1 specs
  mkdir -p "$dir"
  read -r -a specs <<< "$LEAN_SPECS"; m2_chain "$dir" lean libsolver/tuning/sm90.json "${specs[@]}" || return 1
  read -r -a specs <<< "$LEAN_U_SPECS"; m2_chain "$dir" lean-u libsolver/tuning/sm90.json "${specs[@]}" || return 1
  read -r -a specs <<< "$LEAN16_SPECS"; m2_chain "$dir" lean16 libsolver/tuning/sm90.json "${specs[@]}" || return 1
  read -r -a specs <<< "$LEAN128_SPECS"; m2_chain "$dir" lean128 libsolver/tuning/sm90.json "${specs[@]}" || return 1
}
