#!/usr/bin/env bash
# dvc demo for scripts/setup.sh: generates a small speckle pair with a known sub-voxel translation
# and 1 % strain, correlates it (GPU when present, else CPU) and prints the error against the truth.
#   apps/dic_volume/scripts/demo.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: demo.sh BUILD_DIR}
dvc=$build/apps/dic_volume/dvc
dir=$build/demo/dic_volume
mkdir -p "$dir"
"$dvc" generate -o "$dir/pair.h5" --force --size 80 --translation 0.3,-0.25,0.6 --strain 0.01 --seed 1
"$dvc" correlate --pair "$dir/pair.h5" -o "$dir/result.h5" --force --subset 25 --spacing 10 --backend auto -q \
    --vti "$dir/result.vti" --png "$dir/result.png"
echo "dvc demo: results in $dir (result.h5, result.vti for ParaView, result.png)"
