#!/usr/bin/env bash
# The bem command against hostile input (docs/input-checks.md): every result file through the checked
# temporary of batchsolve_io, option values checked before the mesh is read or anything assembled
# (exit 2), refusals leaving no file and no empty result directory, one-line errors without library
# internals, a signal during the commit leaving no temporary and the previous run's files intact.
# usage: test_cli.sh BEM_BINARY SCRATCH_DIR
set -uo pipefail
bem=$1 dir=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../../../data/tests/output_safety_lib.sh
source "$here/../../../data/tests/output_safety_lib.sh"
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir" || exit 1
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }
expect_status() {  # expect_status STATUS DESCRIPTION -- command...
    local want=$1 what=$2; shift 3
    "$@" > out.txt 2> err.txt; local got=$?
    [[ $got == "$want" ]] || { fail "$what: exit $got, expected $want"; cat out.txt err.txt; }
    if [[ $want != 0 ]]; then
        [[ $(wc -l < err.txt) == 1 ]] || { fail "$what: the error is not one line"; cat err.txt; }
        grep -q "filesystem error\|std::\|bad_alloc\|gauss_legendre" err.txt && { fail "$what: library internals in the message"; cat err.txt; }
    fi
}
no_dir() { [[ -e $1 ]] && { fail "left behind: $1"; rm -rf "$1"; }; return 0; }

# sphere: options, and its PLY through the layer.
expect_status 0 sphere -- "$bem" sphere --level 1 -o s.ply
cp s.ply keep.ply
expect_status 3 "sphere -o existing without --force" -- "$bem" sphere --level 2 -o s.ply
cmp -s s.ply keep.ply || fail "sphere replaced an existing file without --force"
expect_status 0 "sphere --force" -- "$bem" sphere --level 2 -o s.ply --force
for r in nan 0 -1 inf; do expect_status 2 "sphere --radius $r" -- "$bem" sphere --radius $r -o r.ply; done
expect_status 2 "sphere --level 40" -- "$bem" sphere --level 40 -o r.ply
for dev in /dev/full /dev/null; do expect_status 3 "sphere -o $dev" -- "$bem" sphere --level 1 -o $dev; done
write_failure big.ply -- "$bem" sphere --level 4 -o big.ply
no_dir r.ply
# Mesh files that are missing or malformed: file errors (3), not the generic 1.
expect_status 3 "check a missing mesh" -- "$bem" check missing.ply
printf 'ply\nformat ascii 1.0\nelement vertex 3\nend_header\n0 0 0\n' > cut.ply
expect_status 3 "check a truncated PLY" -- "$bem" check cut.ply
# solve: every option value before the mesh is read; no result directory is made.
run=("$bem" solve --mesh ico:1 -k 1)
expect_status 2 "--angles 0" -- "${run[@]}" --angles 0 -o out
expect_status 2 "--angles 2000000000" -- "${run[@]}" --angles 2000000000 -o out
grep -q "GiB" err.txt || { fail "--angles: the size is not given"; cat err.txt; }
for g in n=0 n=1 n=1000000 plane=qq extent=-1; do expect_status 2 "--grid $g" -- "${run[@]}" --grid "$g" -o out; done
for m in -1 nan; do expect_status 2 "--mie-radius $m" -- "${run[@]}" --mie-radius $m -o out; done
expect_status 2 "--speed-of-sound 0" -- "${run[@]}" --speed-of-sound 0 -o out
no_dir out
# A problem beyond the memory: refused with its sizes (not std::bad_alloc), exit 4, no directory left.
expect_status 4 "--mesh ico:7" -- "$bem" solve --mesh ico:7 -k 1 -o out7
grep -q "327680 unknowns" err.txt || { fail "ico:7: no sizes"; cat err.txt; }
no_dir out7
expect_status 3 "-o under a device" -- "${run[@]}" -o /dev/null/x
grep -q "/dev/null/x: Not a directory" err.txt || { fail "-o /dev/null/x message"; cat err.txt; }
# validate: options and the CSV through the layer.
expect_status 2 "validate --singular-order 0" -- "$bem" validate --meshes ico:1 --singular-order 0
grep -q "^bem validate: --singular-order" err.txt || { fail "--singular-order message"; cat err.txt; }
expect_status 2 "validate --angles 1" -- "$bem" validate --meshes ico:1 --angles 1
for dev in /dev/full /dev/null; do expect_status 3 "validate --csv $dev" -- "$bem" validate --meshes ico:1 --csv $dev; done
echo old > v.csv
expect_status 3 "validate --csv existing" -- "$bem" validate --meshes ico:1 --csv v.csv
[[ $(cat v.csv) == old ]] || fail "validate --csv replaced an existing file without --force"
expect_status 0 "validate --csv --force" -- "$bem" validate --meshes ico:1 --csv v.csv --force
grep -q "^formulation,mesh" v.csv || fail "validate --csv did not write the table"
# A correct solve, then the same directory: refused without --force, the files kept.
expect_status 0 "solve" -- "${run[@]}" -o res --grid n=5
for f in surface.h5 surface_f0.vtu far_field_f0.csv grid_f0.h5 grid_f0.vtk; do [[ -s res/$f ]] || fail "res/$f not written"; done
expect_status 3 "solve again without --force" -- "${run[@]}" -o res --grid n=5
# The mesh as an output of the run is refused.
cp s.ply keep2.ply
expect_status 3 "--write-matrix the mesh" -- "$bem" solve --mesh s.ply -k 1 -o res2 --write-matrix s.ply
cmp -s s.ply keep2.ply || fail "--write-matrix the mesh: the mesh changed"
no_dir res2
# A signal during the commit of a --force run: the previous run's files intact, no temporary
# (before, the CSV, VTU and VTK were opened in place with O_TRUNC).
if have_pause_hook "$bem" sphere --level 1 -o hook.ply --force; then
    interrupted_commit TERM res res/far_field_f0.csv res/surface_f0.vtu res/grid_f0.vtk res/surface.h5 -- "${run[@]}" -o res --grid n=5 --force
    interrupted_commit INT . s.ply -- "$bem" sphere --level 3 -o s.ply --force
else
    echo "signal cases skipped: this build has no BATCHSOLVE_IO_TEST_HOOKS"
fi

echo "test_cli: $failures failure(s)"
exit $((failures > 0))
