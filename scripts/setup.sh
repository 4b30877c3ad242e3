#!/usr/bin/env bash
# The README's two set-up commands:
#   scripts/setup.sh demo   install missing Debian packages, build (default preset), run the demo
#   scripts/setup.sh test   the same, then every test (ctest)
# The demo generates a batch of SPD systems, solves it on the GPU when one is present (else the
# CPU reference backend) and prints the failures and the backward error.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-demo}
case $mode in demo|test) ;; *) echo "usage: scripts/setup.sh demo|test" >&2; exit 2 ;; esac

packages=(cmake g++ libhdf5-dev libboost-program-options-dev libopenblas-dev liblapacke-dev
          libgtest-dev nlohmann-json3-dev libomp-dev libfftw3-dev libtiff-dev zlib1g-dev pkg-config
          libgmsh-dev clang libclang-rt-dev libopenmpi-dev openmpi-bin python3-dev python3-pip xz-utils)
missing=()
for p in "${packages[@]}"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p"); done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=(); [[ $(id -u) == 0 ]] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -q
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# The Python package (python/) is built inside this build when nanobind is found; its tests need pytest.
PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install -q --disable-pip-version-check nanobind scikit-build-core numpy pytest

jobs=$(nproc)
cmake --preset default
cmake --build build -j"$jobs"

demo_dir=build/demo
mkdir -p "$demo_dir"
build/data/bsolve generate --output "$demo_dir/spd_batch.h5" --n 32 --count 10000 --nrhs 1 --precision d --cond 1e6 --seed 1 --force
build/data/bsolve solve --input "$demo_dir/spd_batch.h5" --output "$demo_dir/solution.h5" --backend auto --force
# Each application's demo (apps/<app>/scripts/demo.sh: a generated problem with a known answer, its error).
for demo in apps/*/scripts/demo.sh; do
  echo "setup: demo of $(basename "$(dirname "$(dirname "$demo")")")"
  bash "$demo" build
done

if [[ $mode == test ]]; then
  ctest --preset default -j"$jobs"
  # The Python package as users install it (pip install ./python, CPU-only, ccache): ~40 s CPU.
  python/scripts/test-pip-install.sh
  # Issue 22's ASan+UBSan build and bounded fuzzing (docs/input-checks.md), when CI's time allows:
  # BATCHSOLVE_CI_SANITIZE=quick (data/ suites + every fuzz target) or =full (+ the library's CPU suites).
  case ${BATCHSOLVE_CI_SANITIZE:-off} in
    quick) scripts/sanitize-cpu.sh --quick ;;
    full) scripts/sanitize-cpu.sh ;;
  esac
fi
