#!/usr/bin/env bash
# The committed GEMM table's confirmation run, as a topic of its own (team calls pass no environment):
# gemm.sh's adopted mode (the final rows of s and d against cuBLAS grouped with targets.json, SYRK/SYR2K,
# a probe sweep of a few tiles beside the top class winners, the GPU tests of the address forms for z, the
# skewed batch). Writes $OUT/gemm/; TOPIC_BUDGET_S (default 80) s.
export GEMM_MODE=adopted
exec bash "$(dirname "$0")/gemm.sh"
