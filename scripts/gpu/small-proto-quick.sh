#!/usr/bin/env bash
# small-lean.sh's proto mode, the prototype, "rows" table and Nsight Compute steps only (about 45 s), for
# a call in which scripts/gpu/tester-dx.sh measures the committed kernels and cuSolverDx at the same n.
# Carried: .carry/small-lean/ (SL_MODE=proto scripts/gpu/small-lean-prebuild.sh).
SL_MODE=proto SL_STEPS="${SL_STEPS:-proto rows ncu-committed ncu-proto}" exec bash "$(dirname "$0")/small-lean.sh"
