#!/usr/bin/env bash
# The dvc command against hostile input (docs/input-checks.md): every output through the checked
# temporary of batchsolve_io, option values checked before any work (exit 2), write errors and
# refusals leaving nothing behind, a signal during the commit leaving no temporary and the previous
# file intact. One case per finding of the hostile-input probe.
# usage: test_cli.sh DVC_BINARY SCRATCH_DIR
set -uo pipefail
dvc=$1 dir=$2
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
    [[ $want == 0 || $(wc -l < err.txt) == 1 ]] || { fail "$what: the error is not one line"; cat err.txt; }
}
nothing_left() {  # nothing_left FILE...: none of them exists, and no temporary
    local f
    for f in "$@"; do [[ -e $f ]] && { fail "left behind: $f"; rm -f "$f"; }; done
    compgen -G "*.tmp-*" > /dev/null && { fail "temporary left: $(ls ./*.tmp-*)"; rm -f ./*.tmp-*; }
}

expect_status 0 generate -- "$dvc" generate -o pair.h5 --size 40 --translation 0.5,0.25,-0.3 --seed 3
run=("$dvc" correlate --pair pair.h5 --subset 15 --spacing 8 --backend cpu -q)

# Options checked before any work: usage errors, and no output.
expect_status 2 "--png-slice 9999" -- "${run[@]}" -o r.h5 --png r.png --png-slice 9999
grep -q "beyond the grid" err.txt || { fail "--png-slice message"; cat err.txt; }
expect_status 2 "--png-slice -5" -- "${run[@]}" -o r.h5 --png r.png --png-slice -5
expect_status 2 "--png-scale 0" -- "${run[@]}" -o r.h5 --png r.png --png-scale 0
expect_status 2 "--png-scale 100000" -- "${run[@]}" -o r.h5 --png r.png --png-scale 100000
for s in nan 0 -3; do expect_status 2 "--strain-sigma $s" -- "${run[@]}" -o r.h5 --strain-sigma $s; done
expect_status 2 "--search-radius 1000" -- "${run[@]}" -o r.h5 --search-radius 1000
grep -q "search-radius" err.txt || { fail "--search-radius message"; cat err.txt; }
expect_status 2 "--search-radius 100000" -- "${run[@]}" -o r.h5 --search-radius 100000
expect_status 2 "--region beyond the volume" -- "${run[@]}" -o r.h5 --region 0:500,0:40,0:40
grep -q "reaches beyond the volume's 40 voxels" err.txt || { fail "--region message"; cat err.txt; }
expect_status 2 "--offset -10" -- "$dvc" correlate --reference a.raw --deformed a.raw --dims 8x8x8 --offset -10 -o r.h5
expect_status 2 "--tolerance nan" -- "${run[@]}" -o r.h5 --tolerance nan
expect_status 2 "--presmooth 50" -- "${run[@]}" -o r.h5 --presmooth 50
expect_status 2 "generate --translation nan" -- "$dvc" generate -o g.h5 --size 40 --translation nan
expect_status 2 "generate --noise -5" -- "$dvc" generate -o g.h5 --size 40 --noise -5
expect_status 2 "generate --sigma 0" -- "$dvc" generate -o g.h5 --size 40 --sigma 0
expect_status 2 "generate --size 0" -- "$dvc" generate -o g.h5 --size 0
expect_status 2 "generate --dtype int7" -- "$dvc" generate -o g.h5 --size 24 --dtype int7
expect_status 2 "generate --speckle stripes" -- "$dvc" generate -o g.h5 --size 24 --speckle stripes
nothing_left r.h5 r.png g.h5
# Outputs refused before any work: a missing directory, a device, an input, another output.
expect_status 3 "--vti no/such/x.vti" -- "${run[@]}" -o r.h5 --vti no/such/x.vti
expect_status 3 "--summary-json no/such/x.json" -- "${run[@]}" -o r.h5 --summary-json no/such/x.json
for dev in /dev/full /dev/null; do
    for opt in --vti --vtu --png --summary-json; do
        expect_status 3 "$opt $dev" -- "${run[@]}" -o r.h5 $opt $dev
    done
done
expect_status 3 "-o r.h5 --vti r.h5" -- "${run[@]}" -o r.h5 --vti r.h5
grep -q "name the same file" err.txt || { fail "same-file message"; cat err.txt; }
expect_status 3 "--vti the input pair" -- "${run[@]}" -o r.h5 --vti pair.h5
nothing_left r.h5
# A correct run writes everything; existing files are refused without --force and kept.
expect_status 0 "every output" -- "${run[@]}" -o r.h5 --vti r.vti --vtu r.vtu --png r.png --summary-json r.json
for f in r.h5 r.vti r.vtu r.png r.json; do [[ -s $f ]] || fail "$f not written"; done
cp r.vti keep.vti
echo old > other.h5
expect_status 3 "--vti existing without --force" -- "${run[@]}" -o new.h5 --vti r.vti
cmp -s r.vti keep.vti || fail "--vti replaced an existing file without --force"
nothing_left new.h5
expect_status 0 "--force replaces" -- "${run[@]}" -o r.h5 --vti r.vti --force
# Write errors (a file-size limit, as a full disk) are errors naming the file, leaving nothing.
write_failure big.h5 -- "${run[@]}" -o big.h5 --vtu big.vtu
nothing_left big.vtu
# A TIFF stack whose second directory lies beyond the end of the file (truncated): an error naming
# the page, not a one-page stack. Crafted byte by byte: one 4x4 8-bit page whose next-IFD offset is 1000.
python3 - << 'PY'
import struct
entries = [(256, 3, 1, 4), (257, 3, 1, 4), (258, 3, 1, 8), (259, 3, 1, 1), (262, 3, 1, 1),
           (273, 4, 1, 110), (278, 3, 1, 4), (279, 4, 1, 16)]
ifd = struct.pack("<H", len(entries)) + b"".join(struct.pack("<HHII", *e) for e in entries) + struct.pack("<I", 1000)
open("cut.tif", "wb").write(b"II*\0" + struct.pack("<I", 8) + ifd + bytes(range(16)))
PY
expect_status 3 "truncated TIFF" -- "$dvc" correlate --reference cut.tif --deformed cut.tif -o t.h5 -q
grep -q "cut.tif: page 1 cannot be read" err.txt || { fail "truncated TIFF message"; cat err.txt; }
nothing_left t.h5
# A signal during the final write: no temporary, the previous file intact.
if have_pause_hook "$dvc" generate -o hook.h5 --size 24 --force; then
    interrupted_commit TERM . r.h5 -- "${run[@]}" -o r.h5 --force
    interrupted_commit INT . r.vti -- "${run[@]}" -o r2.h5 --vti r.vti --force
    interrupted_commit INT . fresh.h5 -- "$dvc" generate -o fresh.h5 --size 40
    [[ -e fresh.h5 ]] && fail "an interrupted first write left its target"
else
    echo "signal cases skipped: this build has no BATCHSOLVE_IO_TEST_HOOKS"
fi

echo "test_cli: $failures failure(s)"
exit $((failures > 0))
