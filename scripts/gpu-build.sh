#!/usr/bin/env bash
# Builds for the GPU machine (preset gpu: CUDA on, sm_90) and packs the executables and the shared
# libraries the GPU machine lacks into .gpu-bundle/bundle.tar.xz (git-ignored). Then, through the
# device tool, with `.gpu-bundle` carried:  scripts/on-gpu.sh tests|baseline|bench|tune ...
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset gpu
cmake --build build-gpu -j"$(nproc)"
../shared/tools/gpu-bundle build-gpu .gpu-bundle
