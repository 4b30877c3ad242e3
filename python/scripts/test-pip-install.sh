#!/usr/bin/env bash
# `pip install ./python` as a user runs it, checked: builds the wheel CPU-only (BATCHSOLVE_CUDA=OFF, so
# CI never compiles the CUDA library twice; ccache when present), installs it into build-pip/site,
# and runs the CPU tests against the installed package from outside the source tree. Prints its time.
set -euo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
site=build-pip/site
rm -rf "$site"
launcher=()
command -v ccache > /dev/null && launcher=(-C cmake.define.CMAKE_CXX_COMPILER_LAUNCHER=ccache)
CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)} PIP_BREAK_SYSTEM_PACKAGES=1 \
  python3 -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps --target "$site" ./python \
  -C cmake.define.BATCHSOLVE_CUDA=OFF "${launcher[@]}"
built=$((SECONDS - start))
# From another folder, so that `import batchsolve` can only find the installed package.
(cd /tmp && PYTHONPATH="$OLDPWD/$site" python3 -c "import batchsolve, sys; assert '$site' in batchsolve.__file__, batchsolve.__file__; print('installed', batchsolve.__file__)")
(cd /tmp && PYTHONPATH="$OLDPWD/$site" python3 -m pytest -q -p no:cacheprovider "$OLDPWD/python/tests/test_cpu.py" | tail -1)
echo "test-pip-install: wheel built and installed in ${built} s, tested in $((SECONDS - start - built)) s"
