#!/usr/bin/env bash
# The hostile-input probe of bsolve, als, dvc and bem (docs/input-checks.md, "The hostile-input
# probe"): bad option values, crafted and truncated files, devices, links, existing and input files
# as outputs, write failures (a file-size limit, as a full disk) and signals during the final write,
# replayed as a new user would try them. Every outcome is classified:
#   bad   a crash (a signal, "terminate called"), a hang, exit 0 on an input that must be refused,
#         a file that must be kept changed (an input, an existing file without --force, the previous
#         run's files), or a temporary "*.tmp-*" left behind;
#   weak  refused, but not as documented: another exit code than the README's (2 usage, 3 file,
#         4 resources), an error of more than one line or showing library internals (std::,
#         "filesystem error", bad_alloc), or an output / empty directory left by a refused run;
#   good  otherwise: a clear one-line error with the documented exit code and nothing left, or the
#         correct result.
# usage: scripts/hostile-input-probe.sh [BUILD_DIR (default build)] [WORK_DIR (new or empty; default a fresh temporary)]
# Prints one line per case (class, id, exit code, first line of stderr) and a summary table last;
# exits 1 when any case is bad.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
work=${2:-$(mktemp -d /tmp/hostile-probe.XXXXXX)}
bsolve=$build/data/bsolve als=$build/apps/als_recommender/als dvc=$build/apps/dic_volume/dvc bem=$build/apps/bem_acoustics/bem
for b in "$bsolve" "$als" "$dvc" "$bem"; do [[ -x $b ]] || { echo "missing $b (build bsolve als dvc bem)"; exit 2; }; done
mkdir -p "$work" && cd "$work" || exit 2
[[ -z $(ls -A .) ]] || { echo "$work is not empty: give a new or empty WORK_DIR"; exit 2; }
# A snapshot of the programs and the library, so that a rebuild during the probe (a shared build
# directory) does not turn into failures of the probed programs.
mkdir -p .bin
cp "$bsolve" "$als" "$dvc" "$bem" .bin/ && cp -P "$build"/libsolver/libbatchsolve.so* .bin/ 2> /dev/null
[[ -x $build/data/tests/test_batch_file ]] && cp "$build/data/tests/test_batch_file" .bin/
export LD_LIBRARY_PATH=$PWD/.bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
bsolve=$PWD/.bin/bsolve als=$PWD/.bin/als dvc=$PWD/.bin/dvc bem=$PWD/.bin/bem
declare -A count=([good]=0 [weak]=0 [bad]=0)
declare -A tool_count
weak_list=() bad_list=()

verdict() {  # verdict CLASS ID RC WHY
    local cls=$1 id=$2 rc=$3 why=$4
    count[$cls]=$((count[$cls] + 1))
    local tool=${id%%:*}
    tool_count[$tool.$cls]=$((${tool_count[$tool.$cls]:-0} + 1))
    [[ $cls == weak ]] && weak_list+=("$id: $why")
    [[ $cls == bad ]] && bad_list+=("$id: $why")
    printf '%-4s %-44s exit %-3s %s\n' "$cls" "$id" "$rc" "$why"
}

# probe ID WANT [keep FILE]... [absent PATH]... -- COMMAND...
#   WANT: the documented exit code (0: must succeed). keep: files that must not change. absent:
#   paths a refused run must not leave.
probe() {
    local id=$1 want=$2; shift 2
    local keep=() absent=()
    while [[ $1 != -- ]]; do
        case $1 in keep) keep+=("$2") ;; absent) absent+=("$2") ;; esac
        shift 2
    done
    shift
    local sums=() f
    for f in "${keep[@]}"; do sums+=("$( [[ -e $f ]] && cksum < "$f" || echo absent)"); done
    timeout -s KILL 300 "$@" > probe.out 2> probe.err < /dev/null
    local rc=$?
    local first
    first=$(head -1 probe.err | cut -c1-150)
    [[ -z $first ]] && first=$(tail -1 probe.out | cut -c1-150)
    local i=0 changed=""
    for f in "${keep[@]}"; do
        [[ "$( [[ -e $f ]] && cksum < "$f" || echo absent)" == "${sums[$i]}" ]] || changed+=" $f"
        i=$((i + 1))
    done
    local temps
    temps=$(find . -name '*.tmp-*' 2> /dev/null | head -3 | tr '\n' ' ')
    find . -name '*.tmp-*' -delete 2> /dev/null
    if ((rc == 137 || rc >= 128)) || grep -q "terminate called\|Segmentation fault\|Aborted" probe.err; then
        verdict bad "$id" $rc "crash or hang: $first"
    elif [[ -n $changed ]]; then
        verdict bad "$id" $rc "changed:$changed ($first)"
    elif [[ -n $temps ]]; then
        verdict bad "$id" $rc "temporary left: $temps"
    elif [[ $want != 0 && $rc == 0 ]]; then
        verdict bad "$id" $rc "accepted (exit 0): $first"
    elif [[ $want == 0 && $rc != 0 ]]; then
        verdict weak "$id" $rc "refused a valid run: $first"
    elif [[ $rc != "$want" ]]; then
        verdict weak "$id" $rc "exit $rc, documented $want: $first"
    elif [[ $want != 0 && $(wc -l < probe.err) -gt 1 ]]; then
        verdict weak "$id" $rc "$(wc -l < probe.err)-line error: $first"
    elif grep -q "std::\|filesystem error\|bad_alloc\|gauss_legendre\|what()" probe.err; then
        verdict weak "$id" $rc "library internals: $first"
    else
        local left=""
        for f in "${absent[@]}"; do [[ -e $f ]] && left+=" $f"; done
        if [[ -n $left ]]; then
            verdict weak "$id" $rc "left behind:$left"
            for f in "${absent[@]}"; do rm -rf "$f"; done
        else
            verdict good "$id" $rc "$first"
        fi
    fi
}

# signal_probe ID SIGNAL DIR KEEP -- COMMAND...: SIGNAL during the final write. With the test builds'
# pause before the rename the signal lands there every time; without it, at 8 moments of a run that
# takes about a second (as the issue's probe did with timeout -s INT 0.45..0.75).
signal_probe() {
    local id=$1 sig=$2 dir=$3 keep=$4; shift 5
    local before
    before=$( [[ -e $keep ]] && cksum < "$keep" || echo absent)
    local worst=good why="" rc=0
    local delays=(hook)
    [[ $hook == yes ]] || delays=(0.3 0.4 0.5 0.6 0.7 0.8 0.9 1.0)
    local d
    for d in "${delays[@]}"; do
        if [[ $d == hook ]]; then
            BATCHSOLVE_IO_TEST_PAUSE_BEFORE_RENAME=20 env --default-signal=INT,TERM,HUP "$@" > probe.out 2> probe.err &
            local pid=$! n=0
            until compgen -G "$dir/*.tmp-*" > /dev/null || ((n > 600)) || ! kill -0 $pid 2> /dev/null; do sleep 0.1; n=$((n + 1)); done
            kill "-$sig" $pid 2> /dev/null
            wait $pid
            rc=$?
        else
            timeout -s "$sig" "$d" env --default-signal=INT,TERM,HUP "$@" > probe.out 2> probe.err
            rc=$?
        fi
        if compgen -G "$dir/*.tmp-*" > /dev/null; then worst=bad why="temporary left after SIG$sig ($(ls "$dir"/*.tmp-* | head -1))"; rm -f "$dir"/*.tmp-*; fi
        local now
        now=$( [[ -e $keep ]] && cksum < "$keep" || echo absent)
        # With the pause the signal lands before the rename: the target must be byte-identical.
        [[ $d == hook && $now != "$before" ]] && { worst=bad why="SIG$sig during the commit changed $keep"; }
        if [[ $now != "$before" && $now != absent && $rc != 0 ]]; then
            # Replaced although the run was killed: only a complete file may replace it (checked by size 0).
            [[ -s $keep ]] || { worst=bad why="SIG$sig left $keep empty"; }
        fi
        [[ $before != absent && ! -e $keep ]] && { worst=bad why="SIG$sig removed $keep"; }
        before=$( [[ -e $keep ]] && cksum < "$keep" || echo absent)
    done
    [[ $worst == good ]] && why="no temporary, $keep intact (${#delays[@]} runs)"
    verdict $worst "$id" $rc "$why"
}

echo "== setting up inputs in $work"
"$bsolve" generate -o batch.h5 --n 16 --count 64 --seed 1 > /dev/null || exit 2
"$bsolve" generate -o nanb.h5 --n 8 --count 6 --seed 3 --bad-nan-b 2 > /dev/null 2>&1
"$als" generate -o ratings.h5 --users 400 --items 300 --interactions 12000 --seed 11 > /dev/null 2>&1
"$als" split -i ratings.h5 --train train.h5 --test test.h5 --seed 12 > /dev/null 2>&1
"$als" train --train train.h5 -o model.h5 --factors 8 --iterations 2 --seed 13 --backend cpu > /dev/null 2>&1
"$dvc" generate -o pair.h5 --size 40 --translation 0.5,0.25,-0.3 --seed 3 > /dev/null
"$bem" sphere --level 1 -o mesh.ply > /dev/null
mkfifo fifo.out 2> /dev/null
ln -sf batch.h5 link_to_batch.h5
ln -sf /nonexistent/x.h5 dangling.h5
mkdir -p adir
echo existing > existing.txt
cp existing.txt existing.h5
printf 'not hdf5\n' > text.h5
: > empty.h5
head -c 3000 batch.h5 > truncated.h5
hook=no
start=$(date +%s%N); BATCHSOLVE_IO_TEST_PAUSE_BEFORE_RENAME=1 "$bem" sphere --level 0 -o hookcheck.ply --force > /dev/null 2>&1; end=$(date +%s%N)
(( (end - start) >= 900000000 )) && hook=yes
echo "pause hook (test build): $hook"

echo "== outputs every tool writes: refusals"
# name: tool command prefix that takes an output as its last option
declare -A out_cmd=(
  [bsolve:generate]="$bsolve generate --n 4 --count 4 --seed 1 -o"
  [bsolve:solve]="$bsolve solve --input batch.h5 --backend cpu -o"
  [als:import]="$als import -i ok.csv --format csv -o"
  [als:generate]="$als generate --users 40 --items 30 --interactions 200 --seed 1 -o"
  [als:train]="$als train --train train.h5 --factors 4 --iterations 1 --seed 1 --backend cpu -o"
  [als:recommend]="$als recommend -m model.h5 --users u0 -o"
  [als:evaluate-json]="$als evaluate -m model.h5 --test test.h5 --json"
  [als:split-test]="$als split -i ratings.h5 --train split_tr.h5 --seed 1 --test"
  [dvc:generate]="$dvc generate --size 24 -o"
  [dvc:correlate]="$dvc correlate --pair pair.h5 --subset 15 --backend cpu -q -o"
  [dvc:vti]="$dvc correlate --pair pair.h5 --subset 15 --backend cpu -q -o d1.h5 --vti"
  [dvc:vtu]="$dvc correlate --pair pair.h5 --subset 15 --backend cpu -q -o d2.h5 --vtu"
  [dvc:png]="$dvc correlate --pair pair.h5 --subset 15 --backend cpu -q -o d3.h5 --png"
  [dvc:summary-json]="$dvc correlate --pair pair.h5 --subset 15 --backend cpu -q -o d4.h5 --summary-json"
  [bem:sphere]="$bem sphere --level 1 -o"
  [bem:validate-csv]="$bem validate --meshes ico:1 --csv"
  [bem:write-matrix]="$bem solve --mesh ico:1 -k 1 -o bemdir1 --write-matrix"
)
printf 'u1,i1,4\nu2,i1,3\nu1,i2,5\n' > ok.csv
for key in $(printf '%s\n' "${!out_cmd[@]}" | sort); do
    read -r -a cmd <<< "${out_cmd[$key]}"
    side=(absent d1.h5 absent d2.h5 absent d3.h5 absent d4.h5 absent split_tr.h5 absent bemdir1)
    probe "$key -> /dev/full" 3 "${side[@]}" -- "${cmd[@]}" /dev/full
    probe "$key -> /dev/null" 3 "${side[@]}" -- "${cmd[@]}" /dev/null
    probe "$key -> FIFO" 3 "${side[@]}" -- "${cmd[@]}" fifo.out
    probe "$key -> directory" 3 "${side[@]}" -- "${cmd[@]}" adir
    probe "$key -> missing directory" 3 "${side[@]}" -- "${cmd[@]}" no/such/dir/out.x
    probe "$key -> existing, no --force" 3 keep existing.txt "${side[@]}" -- "${cmd[@]}" existing.txt
    probe "$key -> dangling link" 3 "${side[@]}" -- "${cmd[@]}" dangling.h5
    probe "$key -> trailing slash" 3 "${side[@]}" -- "${cmd[@]}" newdir/
done
# An input of the run as an output (by name, link and hard link).
ln -f model.h5 model_hardlink.h5 2> /dev/null
probe "bsolve:solve -o its input" 3 keep batch.h5 -- "$bsolve" solve --input batch.h5 -o batch.h5 --force --backend cpu
probe "bsolve:solve -o a link to its input" 3 keep batch.h5 -- "$bsolve" solve --input batch.h5 -o link_to_batch.h5 --force --backend cpu
probe "als:recommend -o the model" 3 keep model.h5 -- "$als" recommend -m model.h5 --users u0 -o model.h5
probe "als:recommend -o the model's hard link" 3 keep model.h5 -- "$als" recommend -m model.h5 --users u0 -o model_hardlink.h5 --force
probe "als:recommend -o the users file" 3 keep train.h5 -- "$als" recommend -m model.h5 --users-file train.h5 -o train.h5 --force
probe "als:evaluate --json the model" 3 keep model.h5 -- "$als" evaluate -m model.h5 --test test.h5 --json model.h5 --force
probe "als:evaluate --json the test file" 3 keep test.h5 -- "$als" evaluate -m model.h5 --test test.h5 --json test.h5 --force
probe "als:train -o the ratings" 3 keep train.h5 -- "$als" train --train train.h5 -o train.h5 --force --seed 1 --backend cpu
probe "als:train -o the resumed model" 3 keep model.h5 -- "$als" train --train train.h5 --resume model.h5 -o model.h5 --force --iterations 1 --backend cpu
probe "als:import -o the text input" 3 keep ok.csv -- "$als" import -i ok.csv --format csv -o ok.csv --force
probe "als:split --train = --test" 3 absent s1.h5 -- "$als" split -i ratings.h5 --train s1.h5 --test ./s1.h5 --seed 1
probe "als:split --test the input" 3 keep ratings.h5 absent s2.h5 -- "$als" split -i ratings.h5 --train s2.h5 --test ratings.h5 --force --seed 1
probe "dvc:correlate -o the pair" 3 keep pair.h5 -- "$dvc" correlate --pair pair.h5 -o pair.h5 --force -q --backend cpu
probe "dvc:correlate --vti the pair" 3 keep pair.h5 absent d5.h5 -- "$dvc" correlate --pair pair.h5 -o d5.h5 --vti pair.h5 --force -q --backend cpu
probe "dvc:correlate -o r.h5 --vti r.h5" 3 absent r.h5 -- "$dvc" correlate --pair pair.h5 --subset 15 -o r.h5 --vti r.h5 -q --backend cpu
"$dvc" correlate --pair pair.h5 --subset 15 -o prev.h5 -q --backend cpu > /dev/null 2>&1
probe "dvc:correlate -o r.h5 --vti r.h5 (existing, --force)" 3 keep prev.h5 -- "$dvc" correlate --pair pair.h5 --subset 15 -o prev.h5 --vti prev.h5 --force -q --backend cpu
probe "bem:solve --write-matrix the mesh" 3 keep mesh.ply absent bemdir2 -- "$bem" solve --mesh mesh.ply -k 1 -o bemdir2 --write-matrix mesh.ply
probe "bem:sphere -o existing without --force" 3 keep mesh.ply -- "$bem" sphere --level 2 -o mesh.ply
"$bem" solve --mesh ico:1 -k 1 -o bemres > /dev/null 2>&1
probe "bem:solve into a used directory without --force" 3 keep bemres/far_field_f0.csv keep bemres/surface.h5 -- "$bem" solve --mesh ico:1 -k 1 -o bemres
probe "bem:solve -o under a device" 3 -- "$bem" solve --mesh ico:1 -k 1 -o /dev/null/x

echo "== write failures (a 4 KiB file-size limit: as a full disk)"
wf() {  # wf ID TARGET -- COMMAND...: must fail (3) naming the target, leaving neither it nor a temporary
    local id=$1 target=$2; shift 3
    rm -f "$target"
    probe "$id" 3 absent "$target" -- bash -c 'ulimit -f 4; exec "$@"' wf "$@"
}
users=$(seq -s, -f 'u%g' 0 399)
wf "bsolve:generate under ulimit -f" big1.h5 -- "$bsolve" generate -o big1.h5 --n 64 --count 64 --seed 1
wf "bsolve:solve under ulimit -f" big2.h5 -- "$bsolve" solve --input batch.h5 -o big2.h5 --backend cpu
wf "als:recommend under ulimit -f" big3.csv -- "$als" recommend -m model.h5 --users "$users" --n 50 -o big3.csv
wf "als:train under ulimit -f" big4.h5 -- "$als" train --train train.h5 -o big4.h5 --factors 8 --iterations 1 --seed 1 --backend cpu
wf "dvc:correlate under ulimit -f" big5.h5 -- "$dvc" correlate --pair pair.h5 --subset 15 -o big5.h5 -q --backend cpu
wf "dvc:generate under ulimit -f" big6.h5 -- "$dvc" generate -o big6.h5 --size 40
wf "bem:sphere under ulimit -f" big7.ply -- "$bem" sphere --level 4 -o big7.ply
wf "bem:solve under ulimit -f" bigdir/surface_f0.vtu -- "$bem" solve --mesh ico:3 -k 1 -o bigdir
rm -rf bigdir

echo "== signals during the final write"
"$bsolve" generate -o sig.h5 --n 16 --count 16 --seed 2 > /dev/null
signal_probe "bsolve:generate SIGINT" INT . sig.h5 -- "$bsolve" generate -o sig.h5 --n 96 --count 3000 --seed 4 --force
signal_probe "bsolve:generate SIGTERM" TERM . sig.h5 -- "$bsolve" generate -o sig.h5 --n 96 --count 3000 --seed 4 --force
cp model.h5 sigmodel.h5
signal_probe "als:train SIGTERM" TERM . sigmodel.h5 -- "$als" train --train train.h5 -o sigmodel.h5 --force --factors 8 --iterations 1 --seed 1 --backend cpu
signal_probe "als:recommend SIGINT" INT . sigrec.csv -- "$als" recommend -m model.h5 --users "$users" --n 50 -o sigrec.csv --force
"$dvc" correlate --pair pair.h5 --subset 15 -o sigr.h5 --vti sigr.vti -q --backend cpu > /dev/null 2>&1
signal_probe "dvc:correlate SIGTERM" TERM . sigr.h5 -- "$dvc" correlate --pair pair.h5 --subset 15 -o sigr.h5 --vti sigr.vti --force -q --backend cpu
signal_probe "dvc:correlate --vti SIGINT" INT . sigr.vti -- "$dvc" correlate --pair pair.h5 --subset 15 -o sigr2.h5 --vti sigr.vti --force -q --backend cpu
"$bem" solve --mesh ico:2 -k 1 -o sigbem --grid n=9 > /dev/null 2>&1
signal_probe "bem:solve --force SIGTERM (csv)" TERM sigbem sigbem/far_field_f0.csv -- "$bem" solve --mesh ico:2 -k 1 -o sigbem --grid n=9 --force
signal_probe "bem:solve --force SIGINT (vtk)" INT sigbem sigbem/grid_f0.vtk -- "$bem" solve --mesh ico:2 -k 1 -o sigbem --grid n=9 --force
signal_probe "bem:sphere SIGTERM" TERM . mesh.ply -- "$bem" sphere --level 4 -o mesh.ply --force

echo "== option values (documented: exit 2, before any work, nothing left)"
U=2
probe "bsolve:generate --n -1" $U absent o1.h5 -- "$bsolve" generate -o o1.h5 --n -1 --count 1
probe "bsolve:generate --cond nan" $U absent o1.h5 -- "$bsolve" generate -o o1.h5 --n 4 --count 1 --cond nan
probe "bsolve:generate --cond 0.5" $U absent o1.h5 -- "$bsolve" generate -o o1.h5 --n 4 --count 1 --cond 0.5
probe "bsolve:generate --precision q" $U absent o1.h5 -- "$bsolve" generate -o o1.h5 --n 4 --count 1 --precision q
probe "bsolve:generate --uplo middle" $U absent o1.h5 -- "$bsolve" generate -o o1.h5 --n 4 --count 1 --uplo middle
probe "bsolve:generate --seed -3" $U absent o1.h5 -- "$bsolve" generate -o o1.h5 --n 4 --count 1 --seed -3
probe "bsolve:generate --bad-nan 99" $U absent o1.h5 -- "$bsolve" generate -o o1.h5 --n 4 --count 2 --bad-nan 99
probe "bsolve:solve --layout diagonal" $U absent o2.h5 -- "$bsolve" solve --input batch.h5 -o o2.h5 --layout diagonal
probe "bsolve:solve --backend tpu" $U absent o2.h5 -- "$bsolve" solve --input batch.h5 -o o2.h5 --backend tpu
probe "bsolve:unknown option" $U -- "$bsolve" solve --bogus
for v in nan -1 inf; do probe "als:train --lambda $v" $U absent o3.h5 -- "$als" train --train train.h5 -o o3.h5 --lambda $v --seed 1; done
probe "als:train --lambda 0 is valid" 0 -- "$als" train --train train.h5 -o o3ok.h5 --lambda 0 --factors 2 --iterations 1 --seed 1 --backend cpu
for v in -1 nan; do probe "als:train --alpha $v" $U absent o3.h5 -- "$als" train --train train.h5 -o o3.h5 --alpha $v --seed 1; done
probe "als:train --eval-every -1" $U absent o3.h5 -- "$als" train --train train.h5 -o o3.h5 --eval-every -1 --seed 1
probe "als:train --factors 0" $U absent o3.h5 -- "$als" train --train train.h5 -o o3.h5 --factors 0 --seed 1
probe "als:train --layout diagonal" $U absent o3.h5 -- "$als" train --train train.h5 -o o3.h5 --layout diagonal --seed 1
probe "als:train --weighting tfidf" $U absent o3.h5 -- "$als" train --train train.h5 -o o3.h5 --weighting tfidf --seed 1
probe "als:train --seed x" $U absent o3.h5 -- "$als" train --train train.h5 -o o3.h5 --seed x
probe "als:train --chunk-size 0" $U absent o3.h5 -- "$als" train --train train.h5 -o o3.h5 --chunk-size 0 --seed 1
probe "als:train --devices 0,x" $U absent o3.h5 -- "$als" train --train train.h5 -o o3.h5 --devices 0,x --backend cpu --seed 1
for v in -5 nan; do probe "als:generate --noise $v" $U absent o4.h5 -- "$als" generate -o o4.h5 --noise $v --seed 1; done
probe "als:generate --zipf -1" $U absent o4.h5 -- "$als" generate -o o4.h5 --zipf -1 --seed 1
probe "als:generate --rank 0" $U absent o4.h5 -- "$als" generate -o o4.h5 --rank 0 --seed 1
probe "als:generate --users 0" $U absent o4.h5 -- "$als" generate -o o4.h5 --users 0 --seed 1
probe "als:generate --feedback maybe" $U absent o4.h5 -- "$als" generate -o o4.h5 --feedback maybe --seed 1
probe "als:split --test-fraction 2" $U absent o5.h5 -- "$als" split -i ratings.h5 --train o5.h5 --test o6.h5 --test-fraction 2 --seed 1
probe "als:split --mode weird" $U absent o5.h5 -- "$als" split -i ratings.h5 --train o5.h5 --test o6.h5 --mode weird --seed 1
probe "als:split --leave-k 0" $U absent o5.h5 -- "$als" split -i ratings.h5 --train o5.h5 --test o6.h5 --mode leave-k-out --leave-k 0 --seed 1
probe "als:recommend --n 0" $U -- "$als" recommend -m model.h5 --users u0 --n 0
probe "als:recommend --format xml" $U -- "$als" recommend -m model.h5 --users u0 --format xml
probe "als:evaluate --k 0" $U -- "$als" evaluate -m model.h5 --test test.h5 --k 0
probe "als:import --format excel" $U absent o7.h5 -- "$als" import -i ok.csv -o o7.h5 --format excel
probe "als:import --columns 0,0" $U absent o7.h5 -- "$als" import -i ok.csv -o o7.h5 --format csv --columns a,b
probe "als:import --duplicates maybe" $U absent o7.h5 -- "$als" import -i ok.csv -o o7.h5 --format csv --duplicates maybe
probe "als:bad command" $U -- "$als" frobnicate
D=("$dvc" correlate --pair pair.h5 --subset 15 --backend cpu -q)
probe "dvc:--png-slice 9999" $U absent o8.h5 -- "${D[@]}" -o o8.h5 --png o8.png --png-slice 9999
probe "dvc:--png-slice -5" $U absent o8.h5 -- "${D[@]}" -o o8.h5 --png o8.png --png-slice -5
probe "dvc:--png-scale 0" $U absent o8.h5 -- "${D[@]}" -o o8.h5 --png o8.png --png-scale 0
probe "dvc:--png-scale 100000" $U absent o8.h5 -- "${D[@]}" -o o8.h5 --png o8.png --png-scale 100000
probe "dvc:--png-component w" $U absent o8.h5 -- "${D[@]}" -o o8.h5 --png o8.png --png-component w
probe "dvc:--vti no/such/x.vti" 3 absent o8.h5 -- "${D[@]}" -o o8.h5 --vti no/such/x.vti
probe "dvc:--summary-json no/such/x.json" 3 absent o8.h5 -- "${D[@]}" -o o8.h5 --summary-json no/such/x.json
for v in nan 0 -3; do probe "dvc:--strain-sigma $v" $U absent o8.h5 -- "${D[@]}" -o o8.h5 --strain-sigma $v; done
for v in 1000 100000 -1; do probe "dvc:--search-radius $v" $U absent o8.h5 -- "${D[@]}" -o o8.h5 --search-radius $v; done
probe "dvc:--region out of range" $U absent o8.h5 -- "${D[@]}" -o o8.h5 --region 0:500,0:40,0:40
probe "dvc:--region malformed" $U absent o8.h5 -- "${D[@]}" -o o8.h5 --region 1:2
probe "dvc:--region empty range" $U absent o8.h5 -- "${D[@]}" -o o8.h5 --region 5:5,0:40,0:40
probe "dvc:--tolerance nan" $U absent o8.h5 -- "${D[@]}" -o o8.h5 --tolerance nan
probe "dvc:--min-zncc 3" $U absent o8.h5 -- "${D[@]}" -o o8.h5 --min-zncc 3
probe "dvc:--presmooth 50" $U absent o8.h5 -- "${D[@]}" -o o8.h5 --presmooth 50
probe "dvc:--spacing 0" $U absent o8.h5 -- "${D[@]}" -o o8.h5 --spacing 0
probe "dvc:--max-iterations 0" $U absent o8.h5 -- "${D[@]}" -o o8.h5 --max-iterations 0
probe "dvc:--interpolation quartic" $U absent o8.h5 -- "${D[@]}" -o o8.h5 --interpolation quartic
probe "dvc:--guess magic" $U absent o8.h5 -- "${D[@]}" -o o8.h5 --guess magic
probe "dvc:--backend tpu" $U absent o8.h5 -- "${D[@]}" -o o8.h5 --backend tpu
probe "dvc:--max-points -1" $U absent o8.h5 -- "${D[@]}" -o o8.h5 --max-points -1
probe "dvc:--offset -10" $U absent o8.h5 -- "$dvc" correlate --reference ok.csv --deformed ok.csv --dims 2x2x2 --offset -10 -o o8.h5 -q
for v in nan inf; do probe "dvc:generate --translation $v" $U absent o9.h5 -- "$dvc" generate -o o9.h5 --size 24 --translation $v; done
probe "dvc:generate --noise -5" $U absent o9.h5 -- "$dvc" generate -o o9.h5 --size 24 --noise -5
probe "dvc:generate --sigma 0" $U absent o9.h5 -- "$dvc" generate -o o9.h5 --size 24 --sigma 0
probe "dvc:generate --strain nan" $U absent o9.h5 -- "$dvc" generate -o o9.h5 --size 24 --strain nan
probe "dvc:generate --size 0" $U absent o9.h5 -- "$dvc" generate -o o9.h5 --size 0
probe "dvc:generate --dtype int7" $U absent o9.h5 -- "$dvc" generate -o o9.h5 --size 24 --dtype int7
probe "dvc:generate --speckle stripes" $U absent o9.h5 -- "$dvc" generate -o o9.h5 --size 24 --speckle stripes
probe "dvc:generate --rotation-axis w" $U absent o9.h5 -- "$dvc" generate -o o9.h5 --size 24 --rotation 2 --rotation-axis w
probe "dvc:generate gradient >= 0.5" $U absent o9.h5 -- "$dvc" generate -o o9.h5 --size 24 --strain 0.6
probe "dvc:bench --size 10" $U -- "$dvc" bench --size 10
probe "dvc:bad command" $U -- "$dvc" frobnicate
S=("$bem" solve --mesh ico:1 -k 1)
for v in 0 1 2000000000; do probe "bem:solve --angles $v" $U absent bo1 -- "${S[@]}" --angles $v -o bo1; done
for v in n=0 n=1 n=1000000 plane=qq extent=-1 foo=1 n=abc; do probe "bem:solve --grid $v" $U absent bo1 -- "${S[@]}" --grid $v -o bo1; done
for v in -1 nan; do probe "bem:solve --mie-radius $v" $U absent bo1 -- "${S[@]}" --mie-radius $v -o bo1; done
probe "bem:solve --speed-of-sound 0" $U absent bo1 -- "${S[@]}" --speed-of-sound 0 -o bo1
probe "bem:solve -k nan" $U absent bo1 -- "$bem" solve --mesh ico:1 -k nan -o bo1
probe "bem:solve -k -1" $U absent bo1 -- "$bem" solve --mesh ico:1 -k -1 -o bo1
probe "bem:solve --direction 0,0,0" $U absent bo1 -- "${S[@]}" --direction 0,0,0 -o bo1
probe "bem:solve --formulation soft-p2" $U absent bo1 -- "${S[@]}" --formulation soft-p2 -o bo1
probe "bem:solve --solver magic" $U absent bo1 -- "${S[@]}" --solver magic -o bo1
probe "bem:solve --unit km" $U absent bo1 -- "${S[@]}" --unit km -o bo1
probe "bem:solve --devices 0,x" $U absent bo1 -- "${S[@]}" --devices 0,x -o bo1
probe "bem:solve --tile 0" $U absent bo1 -- "${S[@]}" --devices 0,1 --tile 0 -o bo1
probe "bem:solve --mesh ico:7 (beyond memory)" 4 absent bo7 -- "$bem" solve --mesh ico:7 -k 1 -o bo7
for v in nan 0 -1; do probe "bem:sphere --radius $v" $U absent so.ply -- "$bem" sphere --radius $v -o so.ply; done
probe "bem:sphere --level 40" $U absent so.ply -- "$bem" sphere --level 40 -o so.ply
probe "bem:sphere --kind cube" $U absent so.ply -- "$bem" sphere --kind cube -o so.ply
for v in 0 100; do probe "bem:validate --singular-order $v" $U -- "$bem" validate --meshes ico:1 --singular-order $v; done
probe "bem:validate --angles 1" $U -- "$bem" validate --meshes ico:1 --angles 1
probe "bem:validate -k 1,2" $U -- "$bem" validate --meshes ico:1,ico:2,ico:3 -k 1,2
probe "bem:bad subcommand" $U -- "$bem" frobnicate
probe "bem:unknown option" $U -- "$bem" solve --no-such-option

echo "== input files"
for tool in bsolve-solve bsolve-inspect als-train als-recommend dvc-correlate; do
    for f in missing.h5 adir text.h5 empty.h5 truncated.h5 fifo.out /dev/null dangling.h5; do
        case $tool in
            bsolve-solve) c=("$bsolve" solve --input "$f" -o in1.h5 --backend cpu) ;;
            bsolve-inspect) c=("$bsolve" inspect "$f") ;;
            als-train) c=("$als" train --train "$f" -o in1.h5 --seed 1) ;;
            als-recommend) c=("$als" recommend -m "$f" --users u0) ;;
            dvc-correlate) c=("$dvc" correlate --pair "$f" -o in1.h5 -q) ;;
        esac
        [[ $f == fifo.out ]] && c=(timeout 20 "${c[@]}")
        probe "${tool%%-*}:${tool#*-} reads $f" 3 absent in1.h5 -- "${c[@]}"
    done
done
for f in missing.ply adir text.h5 empty.h5 /dev/null; do probe "bem:check reads $f" 3 -- "$bem" check "$f"; done
printf 'ply\nformat ascii 1.0\nelement vertex 3\nend_header\n0 0 0\n' > cut.ply
probe "bem:check truncated PLY" 3 -- "$bem" check cut.ply
# Crafted HDF5 content: a model as ratings, ratings as a model, a batch as a pair (once the file
# location, one line).
probe "als:train on a model file" 3 absent in2.h5 -- "$als" train --train model.h5 -o in2.h5 --seed 1
probe "als:recommend on a ratings file" 3 -- "$als" recommend -m ratings.h5 --users u0
probe "dvc:correlate on a batch file" 3 absent in2.h5 -- "$dvc" correlate --pair batch.h5 -o in2.h5 -q
probe "bsolve:solve on a ratings file" 3 absent in2.h5 -- "$bsolve" solve --input ratings.h5 -o in2.h5
# A file declaring an unwritten chunked (12000, 128, 128) batch: refused before allocating.
python3 - << 'PY' 2> /dev/null
import struct  # the chunked batch is made by bsolve's own test; here: a TIFF whose second page is cut off
entries = [(256, 3, 1, 4), (257, 3, 1, 4), (258, 3, 1, 8), (259, 3, 1, 1), (262, 3, 1, 1), (273, 4, 1, 110), (278, 3, 1, 4), (279, 4, 1, 16)]
ifd = struct.pack("<H", len(entries)) + b"".join(struct.pack("<HHII", *e) for e in entries) + struct.pack("<I", 1000)
open("cut.tif", "wb").write(b"II*\0" + struct.pack("<I", 8) + ifd + bytes(range(16)))
PY
probe "dvc:half-truncated TIFF" 3 absent in3.h5 -- "$dvc" correlate --reference cut.tif --deformed cut.tif -o in3.h5 -q
if [[ -x .bin/test_batch_file ]]; then
    probe "bsolve:unwritten chunked batch (test_batch_file)" 0 -- .bin/test_batch_file --gtest_filter=MalformedFile.UnwrittenChunkedDataIsRefused
fi
probe "bsolve:NaN only in B (named on stderr, exit 1)" 1 -- "$bsolve" solve --input nanb.h5 -o nanb_x.h5 --backend cpu
grep -q "systems have NaN or Inf" probe.err || verdict weak "bsolve:NaN only in B message" 1 "not named on stderr"
# als import: BOM, NUL, hex floats, subnormals, huge values, empty input and test sets.
printf '\xef\xbb\xbfu1,i1,4\nu2,i1,3\nu1,i2,5\n' > bom.csv
probe "als:import UTF-8 BOM" 0 -- "$als" import -i bom.csv --format csv -o bom.h5
grep -q "2 users" probe.out || verdict bad "als:import UTF-8 BOM ids" 0 "the BOM stayed in the first id"
printf 'u1,i1,4\nu\0002,i1,3\n' > nul.csv
probe "als:import NUL byte in an id" 3 absent nul.h5 -- "$als" import -i nul.csv --format csv -o nul.h5
printf 'u1,i1,4\nu2,i1,0x1p3\n' > hex.csv
probe "als:import hex float" 3 absent hex.h5 -- "$als" import -i hex.csv --format csv -o hex.h5
printf 'u1,i1,4\nu2,i1,1e-50\n' > tiny.csv
probe "als:import 1e-50 (flushed to 0 by float)" 3 absent tiny.h5 -- "$als" import -i tiny.csv --format csv -o tiny.h5
printf 'u1,i1,4\nu2,i1,1e39\n' > over.csv
probe "als:import 1e39 (beyond float)" 3 absent over.h5 -- "$als" import -i over.csv --format csv -o over.h5
printf 'u1,i1,nan\n' > nan.csv
probe "als:import nan" 3 absent nan.h5 -- "$als" import -i nan.csv --format csv -o nan.h5
{ for u in $(seq 1 30); do for i in 1 2 3; do echo "u$u,i$i,$(((u + i) % 5 + 1))"; done; done; echo "u1,i4,3e38"; } > huge.csv
probe "als:import one rating of 3e38 (warned)" 0 -- "$als" import -i huge.csv --format csv -o huge.h5
grep -q "warning: .*3e+38" probe.err || verdict weak "als:one huge rating" 0 "no warning"
: > empty.csv
probe "als:import empty file" 3 absent e.h5 -- "$als" import -i empty.csv --format csv -o e.h5
"$als" generate -o few.h5 --users 20 --items 30 --interactions 60 --seed 5 > /dev/null 2>&1
"$als" split -i few.h5 --train few_tr.h5 --test few_te.h5 --mode leave-k-out --leave-k 1000 --seed 5 > /dev/null 2>&1
"$als" train --train few_tr.h5 -o few_m.h5 --factors 2 --iterations 1 --seed 5 --backend cpu > /dev/null 2>&1
probe "als:evaluate on an empty test file" 3 -- "$als" evaluate -m few_m.h5 --test few_te.h5
probe "als:recommend unknown user" 3 -- "$als" recommend -m model.h5 --users nobody
probe "als:HDF5 error names the file once" 3 -- "$als" train --train model.h5 -o in4.h5 --seed 1
[[ $(grep -o "model.h5" probe.err | wc -l) -le 1 ]] || verdict weak "als:file named twice" 3 "$(head -1 probe.err)"
# Valid runs stay valid (each output correct, exit 0).
probe "bsolve:valid generate+solve" 0 -- bash -c "'$bsolve' generate -o v.h5 --n 8 --count 8 --seed 1 && '$bsolve' solve --input v.h5 -o vx.h5 --backend cpu"
probe "als:valid recommend -o" 0 -- "$als" recommend -m model.h5 --users u0 -o valid.csv
probe "dvc:valid correlate with every output" 0 -- "${D[@]}" -o v.h5x --vti v.vti --vtu v.vtu --png v.png --summary-json v.json
probe "bem:valid solve" 0 -- "$bem" solve --mesh ico:1 -k 1 -o validbem --grid n=5

echo
echo "== summary (hostile-input probe, $(date -u +%Y-%m-%dT%H:%MZ), $(git -C "$root" rev-parse --short HEAD))"
printf '| tool | good | weak | bad |\n|---|---:|---:|---:|\n'
for t in bsolve als dvc bem; do
    printf '| %s | %d | %d | %d |\n' "$t" "${tool_count[$t.good]:-0}" "${tool_count[$t.weak]:-0}" "${tool_count[$t.bad]:-0}"
done
total=$((count[good] + count[weak] + count[bad]))
printf '| all | %d | %d | %d |\n' "${count[good]}" "${count[weak]}" "${count[bad]}"
echo "$total cases: ${count[good]} good, ${count[weak]} weak, ${count[bad]} bad"
for w in "${weak_list[@]}"; do echo "weak: $w"; done
for b in "${bad_list[@]}"; do echo "bad:  $b"; done
exit $((count[bad] > 0))
