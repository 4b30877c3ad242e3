#!/usr/bin/env bash
# The als command end to end on the CPU backend: --help everywhere, generate -> split -> train ->
# evaluate -> recommend, the error paths (usage, malformed input with its line, unknown user), and
# the real MovieLens / Last.fm files when ../shared/data is present.
# usage: test_cli.sh ALS_BINARY SCRATCH_DIR [SHARED_RATINGS_DIR]
set -uo pipefail
als=$1 dir=$2 shared=${3:-}
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
}

for c in import split train evaluate recommend generate bench; do
    expect_status 0 "$c --help" -- "$als" "$c" --help
    grep -q "Options" out.txt || fail "$c --help prints no options"
done
expect_status 2 "no command" -- "$als"
expect_status 2 "unknown command" -- "$als" frobnicate
expect_status 2 "unknown option" -- "$als" train --bogus
expect_status 2 "missing --output" -- "$als" generate

expect_status 0 generate -- "$als" generate -o all.h5 --users 400 --items 300 --interactions 12000 --seed 11
expect_status 3 "generate refuses to overwrite" -- "$als" generate -o all.h5 --users 40 --items 30 --interactions 120 --seed 11
grep -q "exists" err.txt || fail "overwrite refusal does not say the file exists"
expect_status 0 split -- "$als" split -i all.h5 --train train.h5 --test test.h5 --seed 12
expect_status 0 train -- "$als" train --train train.h5 --test test.h5 -o model.h5 --factors 8 --iterations 3 --seed 13 --backend cpu
grep -q "iter 3 .*build .*solve .*loss .*test P@10" out.txt || { fail "train prints no per-iteration line"; cat out.txt; }
expect_status 0 evaluate -- "$als" evaluate -m model.h5 --test test.h5 --json eval.json
grep -q "popularity" out.txt || fail "evaluate prints no popularity baseline"
expect_status 0 resume -- "$als" train --train train.h5 -o model2.h5 --resume model.h5 --factors 8 --iterations 1 --seed 13 --backend cpu
grep -q "iter 4 " out.txt || fail "resume does not continue at iteration 4"
expect_status 0 recommend -- "$als" recommend -m model.h5 --users u0,u5 --n 5 --format csv
[[ $(wc -l < out.txt) == 11 ]] || { fail "recommend csv: expected a header and 10 rows"; cat out.txt; }
expect_status 0 "recommend json" -- "$als" recommend -m model.h5 --users u1 --n 3 --format json
grep -q '"items"' out.txt || fail "recommend json has no items"
expect_status 0 similar -- "$als" recommend -m model.h5 --similar-to i0 --n 3
expect_status 3 "unknown user" -- "$als" recommend -m model.h5 --users nobody
grep -q "user 'nobody' is not in model.h5" err.txt || { fail "unknown user message"; cat err.txt; }
expect_status 3 "cuda in a CPU-only run or without a GPU" -- "$als" train --train train.h5 -o m3.h5 --backend cuda --seed 1 --iterations 1
[[ -e m3.h5 ]] && fail "a failed train left an output file"

# Import: a malformed line is reported with file and line, or skipped and counted.
printf 'userId,movieId,rating,timestamp\n1,10,4.0,0\n1,11,x,0\n2,10,3,0\n' > bad.csv
expect_status 3 "malformed line" -- "$als" import -i bad.csv -o bad.h5
grep -q "bad.csv:3:" err.txt || { fail "malformed line not named"; cat err.txt; }
[[ -e bad.h5 ]] && fail "a failed import left an output file"
expect_status 0 "skip bad" -- "$als" import -i bad.csv -o bad.h5 --skip-bad
grep -q "1 malformed lines skipped" out.txt || { fail "skip-bad count"; cat out.txt; }
: > empty.csv
expect_status 3 "empty input" -- "$als" import -i empty.csv -o empty.h5 --format csv
grep -q "no ratings" err.txt || fail "empty input message"
expect_status 3 "ratings file that is not HDF5" -- "$als" train --train bad.csv -o m4.h5 --seed 1

# Explicit: generated stars with biases; evaluate with the baselines.
expect_status 0 "generate explicit" -- "$als" generate -o ex.h5 --users 300 --items 200 --interactions 9000 --feedback explicit --seed 21
expect_status 0 "split explicit" -- "$als" split -i ex.h5 --train ex_tr.h5 --test ex_te.h5 --seed 22
expect_status 0 "train explicit" -- "$als" train --train ex_tr.h5 --test ex_te.h5 -o ex_m.h5 --factors 4 --iterations 4 --biases --seed 23 --backend cpu
grep -q "test RMSE" out.txt || fail "explicit train prints no RMSE"
expect_status 0 "evaluate explicit" -- "$als" evaluate -m ex_m.h5 --test ex_te.h5 --train ex_tr.h5
grep -q "user+item biases RMSE" out.txt || fail "explicit evaluate prints no bias baseline"

# A crafted model file on which HDF5 1.10.8 itself segfaults (found by fuzz_als_model): a one-line error
# naming the file, exit 3, never a crash (the reader runs in a child process first).
crafted=$here/data/crafted-model-crashes-hdf5.h5
expect_status 3 "crafted model file" -- "$als" recommend -m "$crafted" --users 1
grep -q "crafted-model-crashes-hdf5.h5" err.txt || { fail "crafted model: the error does not name the file"; cat err.txt; }

# ---- hostile input (docs/input-checks.md, "Every output written safely"): each a regression test ----
same() { cmp -s "$1" "$2" || fail "$3: $1 changed"; }
cp model.h5 keep_model.h5
# Secondary writers never destroy a file: an input of the run, or an existing file without --force.
expect_status 3 "recommend -o the model" -- "$als" recommend -m model.h5 --users u0 -o model.h5
same model.h5 keep_model.h5 "recommend -o the model"
grep -q "is the input file" err.txt || { fail "recommend -o the model: message"; cat err.txt; }
expect_status 3 "evaluate --json the model" -- "$als" evaluate -m model.h5 --test test.h5 --json model.h5
same model.h5 keep_model.h5 "evaluate --json the model"
expect_status 3 "recommend -o the ratings file" -- "$als" recommend -m model.h5 --users u0 --users-file train.h5 -o train.h5
echo old > rec.csv
expect_status 3 "recommend -o existing without --force" -- "$als" recommend -m model.h5 --users u0 -o rec.csv
[[ $(cat rec.csv) == old ]] || fail "recommend -o replaced an existing file without --force"
expect_status 0 "recommend -o existing with --force" -- "$als" recommend -m model.h5 --users u0 -o rec.csv --force
grep -q "^user,rank,item,score" rec.csv || fail "recommend --force did not write the CSV"
expect_status 3 "evaluate --json existing without --force" -- "$als" evaluate -m model.h5 --test test.h5 --json eval.json
# Devices are refused, never written to or replaced; write errors are errors (file-size limit = full disk).
for dev in /dev/full /dev/null; do
    expect_status 3 "recommend -o $dev" -- "$als" recommend -m model.h5 --users u0 -o $dev
    expect_status 3 "evaluate --json $dev" -- "$als" evaluate -m model.h5 --test test.h5 --json $dev
done
users=$(seq -s, -f 'u%g' 0 399)
write_failure big.csv -- "$als" recommend -m model.h5 --users "$users" --n 50 -o big.csv
write_failure big.json -- "$als" recommend -m model.h5 --users "$users" --n 50 --format json -o big.json
# split: both outputs checked before the train file is written.
for t in /dev/full no/such/t.h5 test.h5; do
    rm -f s_train.h5
    expect_status 3 "split --test $t" -- "$als" split -i all.h5 --train s_train.h5 --test $t --seed 1
    [[ -e s_train.h5 ]] && fail "split --test $t wrote the train file first"
done
expect_status 3 "split --train = --test by another name" -- "$als" split -i all.h5 --train s.h5 --test ./s.h5 --seed 1
# Option values before any work, and bad values are usage errors (2).
expect_status 2 "train --eval-every -1" -- "$als" train --train train.h5 -o m5.h5 --eval-every -1 --seed 1
expect_status 2 "generate --noise -5" -- "$als" generate -o g5.h5 --noise -5 --seed 1
expect_status 2 "generate --noise nan" -- "$als" generate -o g5.h5 --noise nan --seed 1
expect_status 2 "train --lambda nan" -- "$als" train --train train.h5 -o m5.h5 --lambda nan --seed 1
expect_status 2 "train --layout bad" -- "$als" train --train train.h5 -o m5.h5 --layout diagonal --seed 1
expect_status 2 "train --build-kernel bad" -- "$als" train --train train.h5 -o m5.h5 --build-kernel fp16 --seed 1
expect_status 2 "import --format bad" -- "$als" import -i bad.csv -o x.h5 --format excel
expect_status 2 "split --test-fraction 2" -- "$als" split -i all.h5 --train a.h5 --test b.h5 --test-fraction 2 --seed 1
[[ -e m5.h5 || -e g5.h5 || -e a.h5 ]] && fail "a refused option left an output"
# Import: a UTF-8 BOM is not part of the first id; NUL bytes, hex floats and values that float
# would flush to 0 are refused with the line (or skipped with --skip-bad).
printf '\xef\xbb\xbfu1,i1,4\nu2,i1,3\nu1,i2,5\n' > bom.csv
expect_status 0 "import with a BOM" -- "$als" import -i bom.csv --format csv -o bom.h5
grep -q "2 users, 2 items" out.txt || { fail "BOM: the first id kept the byte-order mark"; cat out.txt; }
expect_status 0 "recommend for the BOM file's first user" -- "$als" train --train bom.h5 -o bom_m.h5 --factors 2 --iterations 1 --seed 1 --backend cpu
expect_status 0 "first id without BOM" -- "$als" recommend -m bom_m.h5 --users u1 --n 1
printf 'u1,i1,4\nu\0002,i1,3\n' > nul.csv
expect_status 3 "NUL byte in an id" -- "$als" import -i nul.csv --format csv -o nul.h5
grep -q "nul.csv:2: user id contains a NUL byte" err.txt || { fail "NUL id message"; cat err.txt; }
printf 'u1,i1,4\nu2,i1,0x1p3\n' > hex.csv
expect_status 3 "hex float rating" -- "$als" import -i hex.csv --format csv -o hex.h5
grep -q "hex.csv:2: rating '0x1p3' is not a finite number in decimal notation" err.txt || { fail "hex float message"; cat err.txt; }
printf 'u1,i1,4\nu2,i1,1e-50\n' > tiny.csv
expect_status 3 "rating flushed to 0" -- "$als" import -i tiny.csv --format csv -o tiny.h5
grep -q "too small for a float" err.txt || { fail "subnormal message"; cat err.txt; }
# One huge rating among stars: a warning naming it (the fit is dominated by it).
{ for u in $(seq 1 30); do for i in 1 2 3; do echo "u$u,i$i,$(( (u + i) % 5 + 1 ))"; done; done; echo "u1,i4,3e38"; } > huge.csv
expect_status 0 "import a huge rating" -- "$als" import -i huge.csv --format csv -o huge.h5
grep -q "warning: huge.csv: rating 3e+38 (user 'u1', item 'i4')" err.txt || { fail "huge rating: no warning"; cat err.txt; }
# evaluate on a test file without ratings: an error, not "RMSE 0.0000".
expect_status 0 "generate small" -- "$als" generate -o few.h5 --users 20 --items 30 --interactions 60 --seed 5
expect_status 0 "split leave-k-out with k above every user" -- "$als" split -i few.h5 --train few_tr.h5 --test few_te.h5 --mode leave-k-out --leave-k 1000 --seed 5
expect_status 0 "train few" -- "$als" train --train few_tr.h5 -o few_m.h5 --factors 2 --iterations 1 --seed 5 --backend cpu
expect_status 3 "evaluate on an empty test file" -- "$als" evaluate -m few_m.h5 --test few_te.h5
grep -q "holds no ratings" err.txt || { fail "empty test file message"; cat err.txt; }
# HDF5 errors name the file once.
expect_status 3 "a model as ratings" -- "$als" train --train model.h5 -o m6.h5 --seed 1
[[ $(grep -o "model.h5" err.txt | wc -l) == 1 ]] || { fail "the file is named more than once"; cat err.txt; }
# A signal during the final write: no temporary left, the previous file intact.
if have_pause_hook "$als" recommend -m model.h5 --users u0 -o hook.csv --force; then
    interrupted_commit INT . model2.h5 -- "$als" train --train train.h5 -o model2.h5 --force --factors 8 --iterations 1 --seed 13 --backend cpu
    interrupted_commit TERM . rec.csv -- "$als" recommend -m model.h5 --users u0 -o rec.csv --force
    interrupted_commit TERM . new.csv -- "$als" recommend -m model.h5 --users u0 -o new.csv
    [[ -e new.csv ]] && fail "an interrupted first write left its target"
else
    echo "signal cases skipped: this build has no BATCHSOLVE_IO_TEST_HOOKS"
fi

if [[ -n $shared && -f $shared/ml-latest-small/ratings.csv ]]; then
    expect_status 0 "import MovieLens" -- "$als" import -i "$shared/ml-latest-small/ratings.csv" -o ml.h5
    # Every data line is a distinct (user, movie) pair: as many ratings as lines after the header
    # (the data README says 100,836; the copy here may hold more, e.g. one appended line).
    lines=$(($(grep -c "" "$shared/ml-latest-small/ratings.csv") - 1))
    grep -q "imported $lines explicit ratings" out.txt || { fail "MovieLens counts ($lines lines)"; cat out.txt; }
    expect_status 0 "import Last.fm" -- "$als" import -i "$shared/hetrec2011-lastfm-2k/user_artists.dat" --format lastfm -o lfm.h5
    grep -q "imported 92834 implicit ratings: 1892 users, 17632 items" out.txt || { fail "Last.fm counts"; cat out.txt; }
else
    echo "real-data cases skipped: ../shared/data/ratings not present"
fi

echo "test_cli: $failures failure(s)"
exit $((failures > 0))
