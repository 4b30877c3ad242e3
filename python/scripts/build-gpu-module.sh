#!/usr/bin/env bash
# Builds the extension for the GPU machine's Python (3.12) against the working tree's CUDA library in
# build-python-gpu/, copies the package into .py-gpu/batchsolve and pytest's wheels into .whl-python/
# (the GPU machine has no compiler, no internet and no pytest). Run from anywhere in the checkout.
#   PYTHON312=/path/to/python3.12 python/scripts/build-gpu-module.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
py=""
for candidate in ${PYTHON312:-} python3.12 /root/.pyenv/versions/3.12*/bin/python3.12 "$(uv python find 3.12 2>/dev/null)"; do
  if [[ -n $candidate ]] && "$candidate" -c 'import sys; assert sys.version_info[:2] == (3, 12)' 2>/dev/null; then
    py=$(command -v "$candidate"); break
  fi
done
[[ -n $py ]] || { echo "build-gpu-module: no working Python 3.12 (set PYTHON312; e.g. 'uv python install 3.12')" >&2; exit 2; }
nanobind_dir=$(python3 -m nanobind --cmake_dir)
cmake -S . -B build-python-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
  -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_ARCHITECTURES=90 -DBATCHSOLVE_CUDA=ON \
  -DBATCHSOLVE_BUILD_TESTS=OFF -DBATCHSOLVE_BUILD_TOOLS=OFF -DBATCHSOLVE_PYTHON=ON \
  -DPython_EXECUTABLE="$py" -Dnanobind_DIR="$nanobind_dir" > /dev/null
cmake --build build-python-gpu -j2 --target _batchsolve
rm -rf .py-gpu && mkdir -p .py-gpu
cp -r build-python-gpu/python/site/batchsolve .py-gpu/
if ! compgen -G ".whl-python/pytest-*.whl" > /dev/null; then
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d .whl-python pytest==9.2.0 iniconfig==2.3.1 pluggy==1.7.0 packaging==26.4 pygments==2.21.0
fi
readelf -d .py-gpu/batchsolve/_batchsolve*.so | grep -E "NEEDED|RUNPATH"
echo "build-gpu-module: .py-gpu/batchsolve ($(du -sh .py-gpu | cut -f1)), .whl-python ($(du -sh .whl-python | cut -f1)) at $(git rev-parse --short HEAD)"
