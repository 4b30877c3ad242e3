#!/usr/bin/env bash
# The shipped small column-major Cholesky tables confirmed in one device call of at most TOPIC_BUDGET_S
# (100) s: small-lean.sh's confirmation steps (team calls pass no environment, so this topic sets
# them): the tester on potrf and posv, s and d, batch 16384, n = 4..128 with cuSolverDx as its child
# process and the tester's targets; batch 100000 at n = 4, 8, 16, 32; the shipped tables on the GPU
# against LAPACK (s d c z, both triangles, strided and pointer arrays, 2 right-hand sides); the lean
# kernels' rows at batch 16384 and 100000 beside them; Nsight Compute of the shipped s n = 32 kernel.
# Carried: .carry/small-lean/ (scripts/gpu/small-lean-prebuild.sh with SL_CONFIRM=1). Writes $OUT/small-confirm/.
cd "$(dirname "$0")/../.."
SL_NAME=small-confirm SL_STEPS="${SL_STEPS:-committed-wide committed-100k-posv check-committed lean lean-100k ncu-lean}" \
  TOPIC_BUDGET_S=${TOPIC_BUDGET_S:-100} exec bash scripts/gpu/small-lean.sh
