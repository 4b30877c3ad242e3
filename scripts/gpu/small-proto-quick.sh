#!/usr/bin/env bash
# small-proto.sh's prototype, "rows" table and Nsight Compute steps only (about 45 s), for a call in
# which scripts/gpu/tester-dx.sh measures the committed kernels and cuSolverDx at the same n.
SP_STEPS="proto rows ncu-committed ncu-proto" exec bash "$(dirname "$0")/small-proto.sh"
