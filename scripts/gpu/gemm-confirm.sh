#!/usr/bin/env bash
# The confirmation of the GEMM table as committed, as a topic of its own (team calls pass no environment):
# gemm.sh's confirm mode (the final rows of s and d against cuBLAS grouped with the committed table and
# with its s and d entries on the tile list, each with its targets, ncu at x = 512, the skewed batch,
# SYRK/SYR2K, c and z against 16 cuBLAS streams). Writes $OUT/gemm/; TOPIC_BUDGET_S (default 100) s.
export GEMM_MODE=confirm
exec bash "$(dirname "$0")/gemm.sh"
