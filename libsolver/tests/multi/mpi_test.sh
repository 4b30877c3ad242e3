#!/usr/bin/env bash
# Batched posv over MPI ranks on the CPU backend (mpi_posv): -np 1, 2, 3 equal one process; a rank
# that fails is reported by every rank; a rank that hangs makes the others time out instead of hanging.
#   mpi_test.sh MPIEXEC MPI_POSV
# Exit 77 (CTest: skipped) when mpirun is absent.
set -uo pipefail
mpiexec=${1:?usage: mpi_test.sh MPIEXEC MPI_POSV}; prog=${2:?}
if ! command -v "$mpiexec" >/dev/null 2>&1; then echo "skipped: mpirun not found ($mpiexec)"; exit 77; fi
run() { local np=$1; shift; OMP_NUM_THREADS=1 timeout 120 "$mpiexec" --oversubscribe --allow-run-as-root -np "$np" "$@" 2>&1; }
fail=0
# A fresh seed per run unless BATCHSOLVE_TEST_SEED is set (the same variable as the GoogleTest suites).
seed=${BATCHSOLVE_TEST_SEED:-$(( (RANDOM << 15) | RANDOM ))}
[[ $seed =~ ^[0-9]+$ ]] || { echo "BATCHSOLVE_TEST_SEED='$seed' is not a decimal integer"; exit 2; }
echo "seed $seed (replay: BATCHSOLVE_TEST_SEED=$seed ctest -R multi.mpi_posv)"
for np in 1 2 3; do
  out=$(run "$np" "$prog" "$seed" 1001 12); rc=$?
  echo "$out" | grep "mpi_posv:"
  [[ $rc == 0 && $out == *"mpi_posv: ok"* ]] || { echo "FAILED: -np $np (exit $rc)"; echo "$out"; fail=1; }
  # One rank per GPU binds rank r to local rank r (the GPU it takes): every local rank 0..np-1 once.
  for ((r = 0; r < np; ++r)); do
    [[ $out == *"rank $r of $np, local rank $r,"* ]] || { echo "FAILED: -np $np: rank $r is not local rank $r"; fail=1; }
  done
done
# A failing rank: every rank reports rank 1's failure and the job exits non-zero.
out=$(BATCHSOLVE_MPI_FAULT=1:fail run 3 -x BATCHSOLVE_MPI_FAULT "$prog" "$seed" 101 6); rc=$?
# Counted as occurrences, not lines: mpirun may join two ranks' lines into one.
n=$(echo "$out" | grep -o "rank 1 failed in the share's solve: injected failure" | wc -l)
echo "failing rank: exit $rc, $n of 3 ranks named rank 1"
[[ $rc != 0 && $n == 3 ]] || { echo "FAILED: a failing rank"; echo "$out"; fail=1; }
# A hanging rank: the others time out after BATCHSOLVE_MPI_TIMEOUT seconds and end the job.
start=$SECONDS
out=$(BATCHSOLVE_MPI_FAULT=1:hang BATCHSOLVE_MPI_TIMEOUT=3 run 2 -x BATCHSOLVE_MPI_FAULT -x BATCHSOLVE_MPI_TIMEOUT "$prog" "$seed" 101 6); rc=$?
echo "hanging rank: exit $rc after $((SECONDS - start)) s"
[[ $rc != 0 && $rc != 124 && $out == *"did not complete within 3 s"* ]] || { echo "FAILED: a hanging rank"; echo "$out"; fail=1; }
exit $fail
