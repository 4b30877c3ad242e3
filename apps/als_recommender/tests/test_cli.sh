#!/usr/bin/env bash
# The als command end to end on the CPU backend: --help everywhere, generate -> split -> train ->
# evaluate -> recommend, the error paths (usage, malformed input with its line, unknown user), and
# the real MovieLens / Last.fm files when ../shared/data is present.
# usage: test_cli.sh ALS_BINARY SCRATCH_DIR [SHARED_RATINGS_DIR]
set -uo pipefail
als=$1 dir=$2 shared=${3:-}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
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
