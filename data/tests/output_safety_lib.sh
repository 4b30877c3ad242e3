# Shell helpers shared by the command-line tests of bsolve, als, dvc and bem (sourced): the output
# layer's promises (batchsolve_io/output.hpp) checked from outside the process.
#   interrupted_commit SIGNAL DIR TARGET... -- COMMAND...
# runs COMMAND with the test build's pause before the rename (BATCHSOLVE_IO_TEST_PAUSE_BEFORE_RENAME),
# waits until a temporary "*.tmp-*" appears in DIR, sends SIGNAL, and checks: the process ended by
# that signal, no temporary is left in DIR, and every TARGET that existed before is byte-identical.
# Uses fail() of the sourcing script.
interrupted_commit() {
    local sig=$1 dir=$2; shift 2
    local targets=()
    while [[ $1 != -- ]]; do targets+=("$1"); shift; done
    shift
    local t sums=()
    for t in "${targets[@]}"; do sums+=("$( [[ -e $t ]] && cksum < "$t" || echo absent)"); done
    # A background job of a non-interactive shell starts with SIGINT ignored (POSIX), which the layer
    # rightly keeps ignored: give the command the default disposition a terminal's job would have.
    BATCHSOLVE_IO_TEST_PAUSE_BEFORE_RENAME=30 env --default-signal=INT,TERM,HUP "$@" > interrupted.out 2> interrupted.err &
    local pid=$! waited=0
    until compgen -G "$dir/*.tmp-*" > /dev/null; do
        sleep 0.1
        waited=$((waited + 1))
        if ((waited > 1200)) || ! kill -0 "$pid" 2> /dev/null; then
            fail "interrupted_commit: no temporary appeared in $dir ($*)"
            cat interrupted.out interrupted.err
            kill -KILL "$pid" 2> /dev/null
            wait "$pid" 2> /dev/null
            return
        fi
    done
    kill "-$sig" "$pid"
    wait "$pid"
    local rc=$? want=$((128 + $(kill -l "$sig")))
    [[ $rc == "$want" ]] || fail "interrupted_commit: SIG$sig during the commit: exit $rc, expected $want ($*)"
    compgen -G "$dir/*.tmp-*" > /dev/null && { fail "interrupted_commit: SIG$sig left a temporary: $(ls "$dir"/*.tmp-*)"; rm -f "$dir"/*.tmp-*; }
    local i=0
    for t in "${targets[@]}"; do
        local now
        now=$( [[ -e $t ]] && cksum < "$t" || echo absent)
        [[ $now == "${sums[$i]}" ]] || fail "interrupted_commit: SIG$sig changed $t (before: ${sums[$i]}, after: $now)"
        i=$((i + 1))
    done
}

# Whether this build has the pause hook (test builds): a command that commits a file reports the pause
# by taking at least as long. Cheap check: run it with a 1 s pause and time it.
have_pause_hook() {
    local start end
    start=$(date +%s%N)
    BATCHSOLVE_IO_TEST_PAUSE_BEFORE_RENAME=1 "$@" > /dev/null 2>&1
    end=$(date +%s%N)
    (( (end - start) >= 900000000 ))
}

# write_failure TARGET -- COMMAND...: COMMAND under a file-size limit of 4 KiB (ulimit -f, EFBIG as on
# a full disk) must fail with a message naming TARGET and leave neither TARGET nor a temporary.
write_failure() {
    local target=$1; shift 2
    local dir
    dir=$(dirname "$target")
    rm -f "$target"
    (ulimit -f 4 && "$@") > wf.out 2> wf.err
    local rc=$?
    [[ $rc != 0 ]] || fail "write_failure: exit 0 under a 4 KiB file-size limit ($*)"
    grep -q "$(basename "$target")" wf.err || { fail "write_failure: the error does not name $target"; cat wf.err; }
    grep -qi "too large\|no space" wf.err || { fail "write_failure: the error does not say why"; cat wf.err; }
    [[ -e $target ]] && fail "write_failure: $target was left behind"
    compgen -G "$dir/*.tmp-*" > /dev/null && { fail "write_failure: a temporary was left: $(ls "$dir"/*.tmp-*)"; rm -f "$dir"/*.tmp-*; }
    [[ $(wc -l < wf.err) == 1 ]] || { fail "write_failure: the error is not one line"; cat wf.err; }
}
