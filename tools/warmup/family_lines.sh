#!/usr/bin/env bash
# warmup.family_lines: the tuning tables' GEMM and POTF2 kernels (and the triangular leaf kernels) as manifest lines (--families
# gemm,potf2 --list, no GPU: --arch 90). Every listed line must read back through the manifest reader;
# the GEMM lines must hold the binned dispatch's listed kernels and every precision, the POTF2 lines both
# triangles of s and d (none for c, z). A POTF2 warm-up run with BATCHSOLVE_KERNEL_MANIFEST must record
# exactly the listed lines (the launcher's request writes the same format), compile them, and a replay
# of the recording into a fresh folder must produce the same cache files. Malformed potf2 lines are
# refused with the field named.
#   family_lines.sh COMMAND...     (PATH/TO/batchsolve-warmup)
set -euo pipefail
warmup=("$@")
dir=$(mktemp -d /tmp/warmup-families.XXXXXX)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
"${warmup[@]}" --arch 90 --families gemm,potf2 --precisions s,d,c,z --list > "$dir/all.txt"
total=$(grep -c . "$dir/all.txt")
echo "listed: $total lines"; awk '{ print $1, $2 }' "$dir/all.txt" | sort | uniq -c
for p in s d c z; do grep -q "^gemm $p " "$dir/all.txt" || fail "no gemm lines for $p"; done
grep -q '^gemm s n n full 0 0 1 ' "$dir/all.txt" || fail "no binned (problem_list 1) gemm s kernel"
grep -q '^gemm s n n full 0 1 0 ' "$dir/all.txt" || fail "no whole-tile (full_tiles 1) gemm s kernel"
grep -q '^gemm z n c lower 1 ' "$dir/all.txt" || fail "no herk (real diagonal) gemm z kernel"
grep -q '^gemm d syl n full ' "$dir/all.txt" || fail "no symm gemm d kernel"
for p in s d; do for u in lower upper; do grep -q "^potf2 $p $u " "$dir/all.txt" || fail "no potf2 $p $u line"; done; done
grep -q '^potf2 [cz] ' "$dir/all.txt" && fail "potf2 lines for a complex precision"
[[ $(sort "$dir/all.txt" | uniq -d | wc -l) -eq 0 ]] || fail "repeated lines in the listing"
check=$("${warmup[@]}" --kernels "$dir/all.txt" --check-only) || fail "the listing does not read back: $check"
echo "read back: $check"
grep -q ": $total kernel specs, 0 lines refused" <<<"$check" || fail "the reader kept other than $total lines: $check"

# POTF2 of s: recorded by the launcher's request as listed, compiled, replayed file for file
"${warmup[@]}" --arch 90 --families potf2 --precisions s --list > "$dir/potf2.txt"
n=$(grep -c . "$dir/potf2.txt")
first=$(BATCHSOLVE_KERNEL_MANIFEST="$dir/recorded.txt" "${warmup[@]}" --arch 90 --threads 2 --families potf2 --precisions s --cache-dir "$dir/run")
echo "potf2 s: $first"
grep -q ": $n kernels (0 already cached, $n compiled), 0 lines refused" <<<"$first" || fail "the POTF2 warm-up did not compile its $n kernels"
diff <(sort "$dir/potf2.txt") <(sort "$dir/recorded.txt") || fail "the recorded manifest differs from the listing"
replay=$("${warmup[@]}" --arch 90 --threads 2 --kernels "$dir/recorded.txt" --cache-dir "$dir/replay")
diff <(cd "$dir/run" && find . -name 'kernel-*.cubin' | sort) <(cd "$dir/replay" && find . -name 'kernel-*.cubin' | sort) ||
  fail "the replay's cache files differ from the warm-up's"
again=$("${warmup[@]}" --arch 90 --threads 2 --families potf2 --precisions s --cache-dir "$dir/run")
grep -q ": $n kernels ($n already cached, 0 compiled)" <<<"$again" || fail "a second warm-up did not find them on disk: $again"
# one binned GEMM kernel compiles too
grep -m1 '^gemm s n n full 0 0 1 ' "$dir/all.txt" > "$dir/gemm.txt"
gemm=$("${warmup[@]}" --arch 90 --threads 2 --kernels "$dir/gemm.txt" --cache-dir "$dir/gemm")
grep -q ": 1 kernels (0 already cached, 1 compiled), 0 lines refused" <<<"$gemm" || fail "the binned GEMM kernel did not compile: $gemm"

printf '%s\n' 'potf2 s lower 100 16 128 warp 0' 'potf2 q lower 128 16 128 warp 0' 'potf2 s lower 128 16 128 diagonal 0' > "$dir/bad.txt"
if bad=$("${warmup[@]}" --kernels "$dir/bad.txt" --check-only); then fail "malformed potf2 lines accepted: $bad"; fi
grep -q "bad.txt:1: .*config" <<<"$bad" && grep -q "bad.txt:2: .*precision" <<<"$bad" && grep -q "bad.txt:3: .*strip" <<<"$bad" ||
  fail "malformed potf2 lines not reported with their fields: $bad"
# The triangular leaf kernels (trsm/trmm/potrf_vbatched): every kind, both orientations, every precision;
# they read back, those of d compile, and malformed lines are refused with the field named.
"${warmup[@]}" --arch 90 --families triangular --precisions s,d,c,z --list > "$dir/tri.txt"
for p in s d c z; do for k in "solve $p lower" "solve $p upper" "multiply $p lower" "invert $p upper" "potrf_panel $p lower"; do
  grep -q "^triangular $k " "$dir/tri.txt" || fail "no triangular $k line"
done; done
[[ $(sort "$dir/tri.txt" | uniq -d | wc -l) -eq 0 ]] || fail "repeated triangular lines"
tn=$(grep -c . "$dir/tri.txt")
check=$("${warmup[@]}" --kernels "$dir/tri.txt" --check-only) && grep -q ": $tn kernel specs, 0 lines refused" <<<"$check" ||
  fail "the triangular listing does not read back: $check"
grep '^triangular [a-z_]* d ' "$dir/tri.txt" > "$dir/tri-d.txt"
td=$(grep -c . "$dir/tri-d.txt")
tri=$("${warmup[@]}" --arch 90 --threads 2 --kernels "$dir/tri-d.txt" --cache-dir "$dir/tri")
grep -q ": $td kernels (0 already cached, $td compiled), 0 lines refused" <<<"$tri" || fail "the triangular d kernels did not compile: $tri"
printf '%s\n' 'triangular bogus d lower 4 4' 'triangular solve d lower 9 4' 'triangular solve q lower 4 4' 'triangular solve d left 4 4' > "$dir/tri-bad.txt"
if bad=$("${warmup[@]}" --kernels "$dir/tri-bad.txt" --check-only); then fail "malformed triangular lines accepted: $bad"; fi
grep -q "tri-bad.txt:1: .*kind" <<<"$bad" && grep -q "tri-bad.txt:2: .*config" <<<"$bad" && grep -q "tri-bad.txt:3: .*precision" <<<"$bad" &&
  grep -q "tri-bad.txt:4: .*orientation" <<<"$bad" || fail "malformed triangular lines not reported with their fields: $bad"
echo "ok: $total table lines read back; potf2 s recorded as listed ($n), compiled, replayed file for file; a binned GEMM kernel compiled; $tn triangular lines read back, $td of d compiled; bad lines refused"
