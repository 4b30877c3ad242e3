# The candidate tables of small-rows.sh and its prebuild (small-rows-prebuild.sh), written once here for
# both (validation/cusolverdx/fused_table.py --design rows_packed onto libsolver/tuning/sm90.json): one row
# per lane with lean addressing and warp-synchronous steps at column-major potrf and posv, s d, n = 4..32
# (the rows kernel at potrf n = 4, 8, 16, 32; the packed rows kernel, floor(32 / n) whole matrices per warp,
# at potrf n = 12, 24 and at every posv: factor, forward and backward substitution in one kernel), in
# blocks of
#   rows64.json    64 threads (2 warps)
#   rows128.json   128 threads (4 warps)
#   rows256.json   256 threads (8 warps)
# The orders small-rows.sh times and checks, and the prebuild stages.
SR_ORDERS=4,8,12,16,24,32
SR_TABLES="rows128 rows64 rows256"
sr_tables() {  # sr_tables DIR
  local dir=$1 t
  mkdir -p "$dir"
  for t in $SR_TABLES; do
    python3 validation/cusolverdx/fused_table.py --design rows_packed --n "$SR_ORDERS" --routine potrf,posv \
      --precision s,d --threads-per-block "${t#rows}" --output "$dir/$t.json" || return 1
  done
}
