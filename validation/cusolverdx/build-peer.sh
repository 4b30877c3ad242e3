#!/usr/bin/env bash
# Builds cuSolverDx's benchmark (bench_cusolverdx, the tester's --ref cusolverdx) for the orders the
# small Cholesky targets name, where the prebuilt binary in ../shared/tools/peers/cusolverdx/ has
# n = 8, 16, 32, 64, 100, 128 only: the peer's sources are copied to .peers/src/, their list of orders
# set to NS, and the peer's own build.sh run (libmathdx from PyPI; about 2-3 minutes per order on
# 2 cores). The binary lands in .gpu-bundle/cusolverdx/bench_cusolverdx; hand it to the tester with
# --cusolverdx PATH, or put it beside the tester (the GPU bundle's bin/).
#   validation/cusolverdx/build-peer.sh            # NS=4,8,12,16,24,32,48,64,80,100,128
#   NS=8,16 validation/cusolverdx/build-peer.sh    # a quick one
# Run from anywhere in the checkout; .peers/ and .gpu-bundle/ stay git-ignored.
set -euo pipefail
cd "$(dirname "$0")/../.."
src=${CUSOLVERDX_PEER_SRC:-../shared/tools/peers/cusolverdx}
ns=${NS:-4,8,12,16,24,32,48,64,80,100,128}
[[ $ns =~ ^[0-9]+(,[0-9]+)*$ ]] || { echo "build-peer.sh: NS='$ns': expected a comma-separated list of orders" >&2; exit 2; }
work=.peers/src
rm -rf "$work" && mkdir -p "$work"
cp "$src"/build.sh "$src"/run.sh "$src"/gen_cusolverdx.cpp "$src"/bench_cusolverdx.cu "$work"/
# The generator's one list of orders; the benchmark times whatever --n asks for among the generated ones.
sed -i "s/const int ns\[\] = {[0-9, ]*};/const int ns[] = {$ns};/" "$work/gen_cusolverdx.cpp"
grep -q "const int ns\[\] = {$ns};" "$work/gen_cusolverdx.cpp" ||
  { echo "build-peer.sh: the list of orders in $src/gen_cusolverdx.cpp was not found (its source changed?)" >&2; exit 1; }
# bench_cusolverdx's default --n is the old list; the tester always passes --n, so it stays.
bash "$work/build.sh"
echo "build-peer.sh: orders $ns: $(.gpu-bundle/cusolverdx/bench_cusolverdx --list | grep -c '^[fd]') configurations"
