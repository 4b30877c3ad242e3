#!/usr/bin/env bash
# als train under mpirun (CPU backend): -np 2 and -np 3 equal one process to rounding (implicit, and
# explicit with biases); a rank that fails ends the job with its message; a rank that hangs makes the
# others time out (BATCHSOLVE_MPI_TIMEOUT) instead of hanging. Exit 77 (CTest: skipped) without mpirun.
#   test_mpi.sh MPIEXEC ALS COMPARE_MODELS WORK_DIR
set -uo pipefail
mpiexec=${1:?usage: test_mpi.sh MPIEXEC ALS COMPARE_MODELS WORK_DIR}; als=${2:?}; compare=${3:?}; work=${4:?}
if ! command -v "$mpiexec" >/dev/null 2>&1; then echo "skipped: mpirun not found ($mpiexec)"; exit 77; fi
mkdir -p "$work" && cd "$work" || exit 2
mpi() { local np=$1; shift; OMP_NUM_THREADS=1 timeout 180 "$mpiexec" --oversubscribe --allow-run-as-root -np "$np" "$@" 2>&1; }
fail=0
# A fresh seed per run unless BATCHSOLVE_TEST_SEED is set (the same variable as the GoogleTest suites).
seed=${BATCHSOLVE_TEST_SEED:-$(( (RANDOM << 15) | RANDOM ))}
[[ $seed =~ ^[0-9]+$ ]] || { echo "BATCHSOLVE_TEST_SEED='$seed' is not a decimal integer"; exit 2; }
echo "seed $seed (replay: BATCHSOLVE_TEST_SEED=$seed ctest -R apps.als_recommender.mpi)"
for feedback in implicit explicit; do
  extra=(); [[ $feedback == explicit ]] && extra=(--biases --lambda 0.05)
  "$als" generate -o r_$feedback.h5 --seed "$seed" --users 1200 --items 600 --interactions 24000 --feedback $feedback --force >/dev/null || exit 2
  OMP_NUM_THREADS=1 "$als" train --train r_$feedback.h5 -o one.h5 --seed "$seed" --iterations 4 -k 12 --backend cpu "${extra[@]}" --force >/dev/null || { echo "FAILED: one process"; exit 1; }
  for np in 2 3; do
    out=$(mpi $np "$als" train --train r_$feedback.h5 -o np$np.h5 --seed "$seed" --iterations 4 -k 12 --backend cpu "${extra[@]}" --force); rc=$?
    [[ $rc == 0 ]] || { echo "FAILED: -np $np ($feedback, exit $rc)"; echo "$out"; fail=1; continue; }
    echo "$out" | grep -q "on each of $np MPI ranks (exchange MPI)" || { echo "FAILED: -np $np did not report $np ranks"; echo "$out"; fail=1; }
    echo -n "$feedback -np $np vs one process: "
    "$compare" np$np.h5 one.h5 1e-4 || fail=1
  done
done
# Under mpirun a seed is required (each rank would draw its own).
out=$(mpi 2 "$als" train --train r_implicit.h5 -o x.h5 --iterations 1 --backend cpu --force); rc=$?
[[ $rc == 2 && $out == *"--seed is required"* ]] || { echo "FAILED: no --seed under mpirun (exit $rc)"; echo "$out"; fail=1; }
# A failing rank ends the job with its message.
out=$(BATCHSOLVE_MPI_FAULT=1:fail mpi 2 -x BATCHSOLVE_MPI_FAULT "$als" train --train r_implicit.h5 -o x.h5 --seed 1 --iterations 2 --backend cpu --force); rc=$?
echo "failing rank: exit $rc"
[[ $rc != 0 && $out == *"rank 1 of 2: error: injected failure"* ]] || { echo "FAILED: a failing rank"; echo "$out"; fail=1; }
# A hanging rank: the other times out in its next exchange and ends the job.
start=$SECONDS
out=$(BATCHSOLVE_MPI_FAULT=1:hang BATCHSOLVE_MPI_TIMEOUT=3 mpi 2 -x BATCHSOLVE_MPI_FAULT -x BATCHSOLVE_MPI_TIMEOUT "$als" train --train r_implicit.h5 -o x.h5 --seed 1 --iterations 2 --backend cpu --force); rc=$?
echo "hanging rank: exit $rc after $((SECONDS - start)) s"
[[ $rc != 0 && $rc != 124 && $out == *"did not complete within 3 s"* ]] || { echo "FAILED: a hanging rank"; echo "$out"; fail=1; }
[[ -e x.h5 ]] && { echo "FAILED: a failed run left x.h5"; fail=1; }
exit $fail
