#!/usr/bin/env bash
# Installs the build into a scratch prefix and runs the installed programs with no library path set:
# each must find the installed libbatchsolve.so.0 through its RPATH ($ORIGIN/../lib; issue 22: the
# installed tester could not). Usage: installed_rpath.sh BUILD_DIR WORK_DIR
set -uo pipefail
build=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >"$work/install.log" 2>&1 || { tail -5 "$work/install.log"; exit 1; }
failures=0
for program in bsolve tester autotune; do
  exe=$work/prefix/bin/$program
  [[ -x $exe ]] || { echo "skipped: $program is not installed by this build"; continue; }
  if env -u LD_LIBRARY_PATH "$exe" --help >"$work/$program.txt" 2>&1; then
    echo "ok:   $program runs from the prefix"
  else
    echo "FAIL: $program: $(grep -m1 -E 'error|cannot' "$work/$program.txt")"; failures=$((failures + 1))
  fi
done
((failures == 0))
