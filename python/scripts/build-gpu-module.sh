#!/usr/bin/env bash
# Builds the extension modules for the GPU machine's Python (3.12) and the CUDA library they link, from
# the committed HEAD, in build-python-gpu/; copies the package (modules, Python files, libbatchsolve.so.0)
# into .py-gpu/batchsolve and pytest's wheels into .whl-python/ (the GPU machine has no compiler, no
# internet and no pytest). Run from anywhere in the checkout.
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
# From a snapshot of the committed HEAD (git archive: read only), not the shared working tree: the
# modules and the libbatchsolve they travel with are then one consistent build of one commit. The
# snapshot sits at the same depth as the repository root so that ccache (base_dir) finds the objects
# of the other builds.
commit=$(git rev-parse --short HEAD)
tree=build-python-gpu/tree
rm -rf "$tree/libsolver" "$tree/python" "$tree/cmake" "$tree/data" && mkdir -p "$tree"
git archive HEAD | tar -x -C "$tree"
cmake -S "$tree" -B "$tree/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
  -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_ARCHITECTURES=90 -DBATCHSOLVE_CUDA=ON -DBATCHSOLVE_MPI=OFF \
  -DBATCHSOLVE_BUILD_TESTS=OFF -DBATCHSOLVE_BUILD_TOOLS=OFF -DBATCHSOLVE_PYTHON=ON \
  -DPython_EXECUTABLE="$py" -Dnanobind_DIR="$nanobind_dir" > /dev/null
cmake --build "$tree/build" -j2 --target _batchsolve
rm -rf .py-gpu && mkdir -p .py-gpu
cp -r "$tree/build/python/site/batchsolve" .py-gpu/
# The library the modules were compiled against travels with them (gpu-check.sh puts it first on
# LD_LIBRARY_PATH): the bundle's own may come from another commit, whose structs can differ.
cp -L "$tree/build/libsolver/libbatchsolve.so.0" .py-gpu/batchsolve/
echo "$commit" > .py-gpu/batchsolve/COMMIT
if ! compgen -G ".whl-python/pytest-*.whl" > /dev/null; then
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d .whl-python pytest==9.2.0 iniconfig==2.3.1 pluggy==1.7.0 packaging==26.4 pygments==2.21.0
fi
readelf -d .py-gpu/batchsolve/_batchsolve*.so | grep -E "NEEDED|RUNPATH"
echo "build-gpu-module: .py-gpu/batchsolve ($(du -sh .py-gpu | cut -f1): modules + libbatchsolve of $commit), .whl-python ($(du -sh .whl-python | cut -f1))"
