#!/usr/bin/env bash
# warmup.manifest_roundtrip: a run's kernel manifest replayed into a fresh disk cache. batchsolve-warmup
# itself asks the cache for its kernels, so running it with BATCHSOLVE_KERNEL_MANIFEST=FILE records
# them; `--kernels FILE` into an empty cache must then compile exactly as many kernels, to the same
# cache files (same disk keys), and a second replay must find all of them on disk. No GPU: --arch 90.
#   manifest_roundtrip.sh COMMAND...     (PATH/TO/batchsolve-warmup)
set -euo pipefail
warmup=("$@")
dir=$(mktemp -d /tmp/warmup-manifest.XXXXXX)
trap 'rm -rf "$dir"' EXIT
# two small kernels: interleaved potrf and column-major potrs, s, n = 4
common=(--arch 90 --precisions s --n 4 --threads 2)
first=$(BATCHSOLVE_KERNEL_MANIFEST="$dir/manifest.txt" "${warmup[@]}" "${common[@]}" --routines potrf --layouts interleaved --cache-dir "$dir/run")
echo "recording run: $first"
BATCHSOLVE_KERNEL_MANIFEST="$dir/manifest.txt" "${warmup[@]}" "${common[@]}" --routines potrs --layouts column_major --cache-dir "$dir/run" > /dev/null
lines=$(grep -c . "$dir/manifest.txt")
echo "manifest: $lines lines"; cat "$dir/manifest.txt"
[[ $lines -eq 2 ]] || { echo "FAIL: expected 2 kernel specs in the manifest, got $lines"; exit 1; }
replay=$("${warmup[@]}" --arch 90 --threads 2 --kernels "$dir/manifest.txt" --cache-dir "$dir/replay")
echo "replay: $replay"
grep -q ": 2 kernels (0 already cached, 2 compiled), 0 lines refused" <<<"$replay" || { echo "FAIL: the replay did not compile the 2 kernels"; exit 1; }
diff <(cd "$dir/run" && find . -name 'kernel-*.cubin' | sort) <(cd "$dir/replay" && find . -name 'kernel-*.cubin' | sort) ||
  { echo "FAIL: the replay's cache files differ from the recording run's"; exit 1; }
again=$("${warmup[@]}" --arch 90 --threads 2 --kernels "$dir/manifest.txt" --cache-dir "$dir/replay")
grep -q ": 2 kernels (2 already cached, 0 compiled)" <<<"$again" || { echo "FAIL: a second replay did not find both on disk: $again"; exit 1; }
printf 'interleaved potrf s lower 4 0 {"nb":9}\nnonsense\n' > "$dir/bad.txt"
if bad=$("${warmup[@]}" --arch 90 --threads 2 --kernels "$dir/bad.txt" --cache-dir "$dir/bad"); then
  echo "FAIL: a manifest with malformed lines was accepted: $bad"; exit 1
fi
grep -q "bad.txt:1: .*config" <<<"$bad" && grep -q "bad.txt:2: " <<<"$bad" || { echo "FAIL: malformed lines not reported with their numbers: $bad"; exit 1; }
# a column-major line beyond n = 128 (the shared-memory kernels, n 129..256; the GPU suites record
# them) reads like the others: the manifest's limit is the planner's, not the register kernels'
printf '%s\n' 'column_major potrf s lower 200 0 {"nb":8,"looking":"left","full_unroll":false,"chunk_size":0,"threads_per_block":0,"warps_per_matrix":8,"grid_blocks_per_sm":0,"matrices_per_block":1,"fast_math":false,"nrhs_block":1,"max_registers":0,"rows_per_thread":5,"threads_per_row":0,"through_interleaved":false,"staged":true,"tensor_cores":false,"solve_warps_per_matrix":0,"solve_nb":0}' > "$dir/shared.txt"
shared=$("${warmup[@]}" --kernels "$dir/shared.txt" --check-only) || { echo "FAIL: a shared-memory kernel line (n = 200) was refused: $shared"; exit 1; }
echo "shared-memory line: $shared"
echo "ok: the manifest's 2 kernels replayed file for file; malformed lines reported; n = 200 reads"
