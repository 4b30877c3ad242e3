# The candidate tables of small-m1.sh and its prebuild (small-m1-prebuild.sh), written once here for
# both (validation/cusolverdx/fused_table.py --design shape, chained one order at a time):
#   m1.json      M1_SPECS onto libsolver/tuning/sm90.json (potrf and posv, s d; N:SHAPE/TPB/LOOKING/NB/ROUTINES)
#   m1ld.json    the same with config.compile_time_ld (lda = n in the square-grid kernels' text)
#   p4ld.json    potrf s d n = 48 on 12 x 4 (4 x 4 threads), 64 threads per block, warp-synchronous, ld
#   m1ld-100k.json  M1_SPECS (potrf, ld) onto libsolver/tuning/sm90-batch100000.json
# m1: one matrix per 64-thread block on 8 x 8 threads (the prototype's m1 form, steps not unrolled) at
# n = 48..128; n = 24, 32 (potrf) four matrices per 64-thread block on 4 x 4 threads, steps per warp.
M1_SPECS=${M1_SPECS:-"24:6x4/64/left/8/potrf 32:8x4/64/left/8/potrf 48:6x8/64/right/8 64:8x8/64/right/8 80:10x8/64/right/8 100:13x8/64/right/8 128:16x8/64/right/8"}
m1_chain() {  # m1_chain DIR OUT BASE_TABLE EXTRA_ARGS N:SHAPE/TPB/LOOKING/NB[/ROUTINES] ...
  local dir=$1 dest=$2 prev=$3 extra=$4 i=0 spec shape tpb look nb rts; shift 4
  for spec in "$@"; do
    IFS=/ read -r shape tpb look nb rts <<< "${spec#*:}"
    # shellcheck disable=SC2086
    python3 validation/cusolverdx/fused_table.py --committed "$prev" --design shape --shape "$shape" --n "${spec%%:*}" \
      --routine "${rts:-potrf,posv}" --precision s,d --threads-per-block "${tpb:-128}" --looking "${look:-right}" \
      --nb "${nb:--1}" $extra --output "$dir/$dest.$i.json" || return 1
    prev=$dir/$dest.$i.json; i=$((i + 1))
  done
  cp "$prev" "$dir/$dest.json"
}
m1_tables() {  # m1_tables DIR
  local dir=$1 s specs100k=()
  mkdir -p "$dir"
  read -r -a specs <<< "$M1_SPECS"
  m1_chain "$dir" m1 libsolver/tuning/sm90.json "" "${specs[@]}"
  m1_chain "$dir" m1ld libsolver/tuning/sm90.json --compile-time-ld "${specs[@]}"
  m1_chain "$dir" p4ld libsolver/tuning/sm90.json --compile-time-ld 48:12x4/64/left/8/potrf
  for s in "${specs[@]}"; do
    [[ ${s%%:*} -ge 48 ]] && specs100k+=("${s}/potrf")
  done
  m1_chain "$dir" m1ld-100k libsolver/tuning/sm90-batch100000.json --compile-time-ld "${specs100k[@]}"
}
