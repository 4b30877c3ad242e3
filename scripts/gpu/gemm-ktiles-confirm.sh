#!/usr/bin/env bash
# The shipped GEMM table after the ktiles sweep, confirmed as a topic of its own (team calls pass no environment):
# gemm.sh's adopted mode (final rows against cuBLAS grouped with targets; d's rows again with
# BATCHSOLVE_GEMM_TC_ROW=4; the d and z GPU tests of the address forms; TRSM's two algorithms per order; SYRK/SYR2K;
# a probe sweep of scripts/gpu/gemm-ktiles-probe-candidates.json; the skewed batch). Writes $OUT/gemm/;
# TOPIC_BUDGET_S (default 80) s.
export GEMM_MODE=adopted GEMM_CONFIRM_R4=1 GEMM_TRSM=1
export GEMM_PROBE=${GEMM_PROBE:-scripts/gpu/gemm-ktiles-probe-candidates.json}
exec bash "$(dirname "$0")/gemm.sh"
