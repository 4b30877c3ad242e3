#!/usr/bin/env bash
# Builds cuSolverDx's peer benchmark (bench_cusolverdx, the tester's --ref cusolverdx) for every order
# issue 37's targets name, n = 4, 8, 12, 16, 24, 32, 48, 64, 80, 100, 128, and puts it where the
# small-Cholesky GPU scripts look for it: .carry/small-lean/bench_cusolverdx (scripts/gpu/lib/prelude.sh's
# find_cusolverdx). The prebuilt binary in ../shared/tools/peers/cusolverdx/ has n = 8, 16, 32, 64,
# 100, 128 only (gen_cusolverdx.cpp's `ns[]`), so the column-major speed targets at n = 4, 12,
# 24, 48, 80 have no cuSolverDx figure to be judged against. No GPU needed; about 50-65 minutes on
# 2 cores for the 186 configurations (3943 s on 2026-12-04 beside other work: generation ~20 s per
# configuration, the LTO device link ~16 min; libmathdx runs NVRTC for every configuration; cached in .peers/build/cusolverdx/gen, so a
# re-run only generates what is new). Steps:
#   1. copies the peer's sources to .peers/cusolverdx-src/ (git-ignored) and rewrites in the copy what
#      assumes the six orders: the generator's ns[], the benchmark's default --n and its usage line, and
#      kMaxBpb (the info arrays' padding, 64) which becomes the largest BatchesPerBlock generated (n = 4
#      may suggest more matrices per block than n = 8's 4, and 4x the suggestion is generated);
#   2. runs the copy's build.sh: libmathdx from PyPI (nvidia-libmathdx-cu13) into .peers/, the binary
#      staged with run.sh in .gpu-bundle/cusolverdx/ (git-ignored);
#   3. checks with --list that every order has a configuration for float and double, potrf and posv;
#   4. copies the binary to .carry/small-lean/bench_cusolverdx (git-ignored; the small-*-prebuild.sh
#      scripts keep a binary there that lists more orders than the one they would copy).
#   scripts/peers/cusolverdx-all-orders.sh                  # the 11 orders
#   NS=4,12 scripts/peers/cusolverdx-all-orders.sh          # a quick one (its binary still lands in .carry)
# Run it from the repository root (it changes there itself); run it under nice on a shared machine.
# validation/cusolverdx/build-peer.sh does steps 1-2 without the kMaxBpb and --n rewrites and step 4.
set -euo pipefail
cd "$(dirname "$0")/../.."
src=${CUSOLVERDX_PEER_SRC:-../shared/tools/peers/cusolverdx}
ns=${NS:-4,8,12,16,24,32,48,64,80,100,128}
[[ $ns =~ ^[0-9]+(,[0-9]+)*$ ]] || { echo "cusolverdx-all-orders.sh: NS='$ns': expected a comma-separated list of orders" >&2; exit 2; }
copy=.peers/cusolverdx-src
carry=.carry/small-lean
t_start=$(date +%s)

# 1. the copy, rewritten for the orders
rm -rf "$copy" && mkdir -p "$copy"
cp "$src"/build.sh "$src"/run.sh "$src"/gen_cusolverdx.cpp "$src"/bench_cusolverdx.cu "$src"/README.md "$copy"/
gen=$copy/gen_cusolverdx.cpp bench=$copy/bench_cusolverdx.cu
rewrite() {  # rewrite FILE SED-EXPRESSION FIXED-STRING-EXPECTED-AFTER
  sed -i "$2" "$1"
  grep -qF -- "$3" "$1" || { echo "cusolverdx-all-orders.sh: '$3' not made in $1 (has $src changed?)" >&2; exit 1; }
}
rewrite "$gen" "s/const int ns\[\] = {[0-9, ]*};/const int ns[] = {$ns};/" "const int ns[] = {$ns};"
rewrite "$bench" "s/std::vector<int> ns{[0-9, ]*};/std::vector<int> ns{$ns};/" "std::vector<int> ns{$ns};"
rewrite "$bench" "s/\[--n [0-9,]*\]/[--n $ns]/" "[--n $ns]"
# kMaxBpb: info is allocated batch + kMaxBpb long and a block writes BPB entries from its first matrix,
# so it must be at least the largest BPB of cusolverdx_configs.inc; 64 stays the floor.
rewrite "$bench" 's|^static const int kMaxBpb = 64; .*|#define CFG(T, N, POSV, BPB, BX, BY, BZ, SYM, SUGG) BPB,\
static constexpr int kConfigBpbs[] = {\
#include "cusolverdx_configs.inc"\
};\
#undef CFG\
static constexpr int max_config_bpb() { int m = 64; for (int b : kConfigBpbs) m = b > m ? b : m; return m; }\
static const int kMaxBpb = max_config_bpb();  // info arrays are padded by this much (the largest BPB, >= 64)|' \
  'static const int kMaxBpb = max_config_bpb();'
# every other place with the six orders is prose (comments, README); say so if code grows one
if grep -n '8, *16, *32, *64, *100, *128' "$gen" "$bench" | grep -v '^[^:]*:[0-9]*: *//'; then
  echo "cusolverdx-all-orders.sh: the six orders are still in the code above; extend the rewrites" >&2; exit 1
fi

# 2. build (stages .gpu-bundle/cusolverdx/)
bash "$copy/build.sh"
bin=.gpu-bundle/cusolverdx/bench_cusolverdx

# 3. every order for float and double, potrf and posv
list=$("$bin" --list)
"$bin" --help 2>&1 | grep -F -- "--n $ns" >/dev/null || { echo "cusolverdx-all-orders.sh: $bin --help does not show --n $ns" >&2; exit 1; }
missing=
for p in float double; do
  for r in potrf posv; do
    for n in ${ns//,/ }; do
      grep -q "^$p,$n,$r," <<< "$list" || missing+=" $p/$r/n=$n"
    done
  done
done
[[ -z $missing ]] || { echo "cusolverdx-all-orders.sh: no configuration for$missing" >&2; exit 1; }
orders=$(awk -F, '/^(float|double),/ { print $2 }' <<< "$list" | sort -nu | paste -sd, -)
maxbpb=$(awk -F, '/^(float|double),/ && $4 > m { m = $4 } END { print m }' <<< "$list")

# 4. where the small-Cholesky GPU scripts look
mkdir -p "$carry"
rm -f "$carry/bench_cusolverdx" && cp "$bin" "$carry/bench_cusolverdx" && chmod +x "$carry/bench_cusolverdx"
echo "cusolverdx-all-orders.sh: $(grep -c '^[fd]' <<< "$list") configurations, orders $orders (s d, potrf posv each)," \
     "largest BPB $maxbpb, $(du -h "$bin" | cut -f1) binary -> $bin and $carry/bench_cusolverdx ($(( $(date +%s) - t_start )) s)"
