#!/usr/bin/env bash
# The committed GEMM table's confirmation run, as a topic of its own (team calls pass no environment):
# gemm.sh's adopted mode (the final rows of s and d against cuBLAS grouped with targets.json, SYRK/SYR2K,
# the GPU tests of the register path's address forms, the skewed batch, c and z against 16 cuBLAS
# streams). Writes $OUT/gemm/; TOPIC_BUDGET_S (default 75) s.
export GEMM_MODE=adopted
exec bash "$(dirname "$0")/gemm.sh"
