#!/usr/bin/env bash
# The shipped small column-major Cholesky tables confirmed in one device call of at most TOPIC_BUDGET_S
# (150) s, with small-lean.sh's confirmation steps (team calls pass no environment, so this topic sets
# them), most important first: the tester on potrf and posv, s and d, n = 4..128 with cuSolverDx as its
# child process and the tester's targets, batch 16384 (targets.json) and 100000 (targets-100k.json); the
# shipped tables on the GPU against LAPACK (s d c z, both triangles, strided and pointer arrays, 2
# right-hand sides); then the candidates where cuSolverDx still wins: the register tiles 1x1, 1x2,
# 1x4, 2x2 at n = 24, 32, 48, 64 and the lean rows kernel at d n = 32 capped at 80 / 64 registers.
# Carried: .carry/small-lean/ (scripts/gpu/small-lean-prebuild.sh with SL_CONFIRM=1). Writes $OUT/small-confirm/.
cd "$(dirname "$0")/../.."
SL_NAME=small-confirm \
  SL_STEPS="${SL_STEPS:-committed-wide committed-100k-wide check-committed shape-1x1 shape-1x2 shape-1x4 shape-2x2 cap-d32-80 cap-d32-64}" \
  TOPIC_BUDGET_S=${TOPIC_BUDGET_S:-150} exec bash scripts/gpu/small-lean.sh
